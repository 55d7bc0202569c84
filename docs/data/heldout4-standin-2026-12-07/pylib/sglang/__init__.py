# stand-in sglang package: `import sglang; sglang.__version__` answers as gauntlet's version command asks
__version__ = "0.5.6.post1"
