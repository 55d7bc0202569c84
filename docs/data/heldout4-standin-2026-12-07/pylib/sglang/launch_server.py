# `python3 -m sglang.launch_server ...` (gauntlet's sglang profile): the fourth stand-in's SGLang persona
import os
import sys

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
import standin  # noqa: E402

if __name__ == "__main__":
    standin.main(None, "sglang")
