# Run by MicroPython's unix port (not CPython): builds the Raspberry Pi Pico's littlefs
# filesystem (RPI_PICO: 352 blocks of 4096 bytes, littlefs v2, progsize 256) with the given
# files in its root, as a flash image for offset 0xA0000.
#
#   micropython -X heapsize=16M lfs_image.py OUT FILE...
import sys
import vfs

BLOCK = 4096
BLOCKS = 352


class RamFlash:
    # the extended block-device protocol littlefs uses, over a bytearray of erased flash
    def __init__(self):
        self.data = bytearray(b"\xff" * (BLOCK * BLOCKS))

    def readblocks(self, n, buf, off=0):
        s = n * BLOCK + off
        buf[:] = self.data[s:s + len(buf)]

    def writeblocks(self, n, buf, off=None):
        if off is None:
            self.ioctl(6, n)
            off = 0
        s = n * BLOCK + off
        self.data[s:s + len(buf)] = buf

    def ioctl(self, op, arg):
        if op == 4:
            return BLOCKS
        if op == 5:
            return BLOCK
        if op == 6:
            s = arg * BLOCK
            self.data[s:s + BLOCK] = b"\xff" * BLOCK
        return 0


def main():
    out = sys.argv[1]
    dev = RamFlash()
    vfs.VfsLfs2.mkfs(dev, progsize=256)
    fs = vfs.VfsLfs2(dev, progsize=256)
    vfs.mount(fs, "/pico")
    for path in sys.argv[2:]:
        name = path.split("/")[-1]
        with open(path, "rb") as src:
            data = src.read()
        with open("/pico/" + name, "wb") as dst:
            dst.write(data)
    vfs.umount("/pico")
    with open(out, "wb") as f:
        f.write(dev.data)


main()
