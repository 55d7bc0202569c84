"""chat_template.py -- the Jinja chat template stored in tokenizer.chat_template (no torch,
so tools without it can read it).

It renders exactly what data.chat_prompt() builds (SPEC.md "Chat rendering"): system
messages are prefixed to the next user message followed by "\\n"; thinking is off unless
enable_thinking is true. Earlier assistant turns get an empty think block, except an
assistant message after the last user message that carries reasoning_content (a
continuation), which is rendered with it, as Qwen3's template does. That case never
occurs in training or in an ordinary request; llama.cpp's template analyser renders it to
learn the reasoning tags: without it, it takes the whole of `<think></think>` for the end
tag and puts every answer in reasoning_content.
"""

CHAT_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- set ns = namespace(sys='', last_user=-1) -%}"
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}"
    "{%- endfor -%}"
    "{%- for m in messages -%}"
    "{%- if m['role'] == 'system' -%}"
    "{%- set ns.sys = ns.sys + m['content'] + '\\n' -%}"
    "{%- elif m['role'] == 'user' -%}"
    "{{- '<|user|>' + ns.sys + m['content'] + '<|end|>' -}}"
    "{%- set ns.sys = '' -%}"
    "{%- elif m['role'] == 'assistant' -%}"
    "{%- if loop.index0 > ns.last_user and m['reasoning_content'] is defined and m['reasoning_content'] -%}"
    "{{- '<|assistant|><think>' + m['reasoning_content'] + '</think>' + m['content'] + '<|end|>' -}}"
    "{%- else -%}"
    "{{- '<|assistant|><think></think>' + m['content'] + '<|end|>' -}}"
    "{%- endif -%}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{- '<|assistant|>' -}}"
    "{%- if not (enable_thinking is defined and enable_thinking) -%}{{- '<think></think>' -}}{%- endif -%}"
    "{%- endif -%}"
)
