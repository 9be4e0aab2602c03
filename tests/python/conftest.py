# The ksmith_kb package as ksmith embeds it, imported from the source tree.
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "kernelbench"))
