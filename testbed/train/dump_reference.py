"""dump_reference.py -- reference outputs of a GGUF model, computed by the PyTorch model.

  /usr/bin/python3 testbed/train/dump_reference.py MODEL.gguf PROMPT [--thinking]
      [--completion] [--max-tokens N] [--system TEXT]

Loads the file through gguf_read.py (F16 -> fp32), renders PROMPT as one chat user turn (or,
with --completion, as "<s>" + PROMPT), decodes greedily in fp32 and prints one JSON object:
prompt_ids, the generated ids and text (reasoning split out), and the first step's top-5
logits.  The C server's tests compare against these numbers.
"""

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import export  # noqa: E402
from train import greedy, split_output  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("prompt")
    ap.add_argument("--thinking", action="store_true")
    ap.add_argument("--completion", action="store_true", help="raw prompt after <s>, no chat template")
    ap.add_argument("--system", default=None)
    ap.add_argument("--max-tokens", type=int, default=64)
    a = ap.parse_args()
    torch.set_num_threads(min(2, torch.get_num_threads()))
    model, _ = export.load_gguf(a.model)
    if a.completion:
        prompt_ids = [data.BOS] + data.encode_text(a.prompt)
    else:
        prompt_ids = data.chat_prompt([(a.prompt, None)], a.thinking, system=a.system)
    with torch.no_grad():
        gen, top5 = greedy(model, prompt_ids, torch.device("cpu"), a.max_tokens)
    toks = data.vocab_tokens()
    out = {
        "model": os.path.basename(a.model),
        "mode": "completion" if a.completion else "chat",
        "prompt": a.prompt,
        "system": a.system,
        "thinking": a.thinking,
        "prompt_text": data.decode(prompt_ids),
        "prompt_ids": prompt_ids,
        "generated_ids": gen,
        "generated_text": data.decode(gen),
        "top5_first_step": [{"id": i, "token": toks[i], "logit": round(v, 5)} for i, v in top5],
    }
    if not a.completion:
        reasoning, answer = split_output(gen)
        out["reasoning"], out["answer"] = reasoning, answer
    out["stopped"] = "eot" if gen and gen[-1] == data.END else ("eos" if gen and gen[-1] == data.EOS else "length")
    # one key per line, values compact: easy to read and to diff
    print("{\n" + ",\n".join(" %s: %s" % (json.dumps(k), json.dumps(v, ensure_ascii=False)) for k, v in out.items()) + "\n}")


if __name__ == "__main__":
    main()
