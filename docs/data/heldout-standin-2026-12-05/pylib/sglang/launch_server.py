# stand-in for sglang.launch_server: the held-out engine (../../standin.py)
import sys
import os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import standin
if __name__ == "__main__":
    standin.main()
