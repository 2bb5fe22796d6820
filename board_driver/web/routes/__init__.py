"""The page's API by feature: each module registers its routes with ``setup(app)``, and its
handlers read what they need from the application's :class:`~board_driver.web.context.AppContext`
(``request.app[CTX]``). :func:`board_driver.web.app.init_app` registers them all."""
