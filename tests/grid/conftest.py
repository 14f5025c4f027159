import sys
from pathlib import Path

# the control-flow fuzz generator and the conformance helpers live beside the conformance tests
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))
