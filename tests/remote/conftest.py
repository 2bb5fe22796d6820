import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "club"))     # clubtools: the real broker
sys.path.insert(0, str(Path(__file__).resolve().parent))                  # the sides' helpers
