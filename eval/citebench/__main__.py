"""`python -m aqgr.eval.citebench ARCHIVE --out DIR`: the same command outside the eval CLI."""

from aqgr.eval.citebench.cli import main

if __name__ == "__main__":
    main()
