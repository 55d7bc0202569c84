# stand-in tensorrt_llm package: answers a version query (`import tensorrt_llm; tensorrt_llm.__version__`)
__version__ = "1.1.0rc5"
