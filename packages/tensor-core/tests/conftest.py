import os
import sys

# The operator table package (tests/optable) is imported by test modules.
sys.path.insert(0, os.path.dirname(__file__))
