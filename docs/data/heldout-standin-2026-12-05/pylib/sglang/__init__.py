__version__ = "0.5.6.post2"
