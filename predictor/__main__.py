from .admin.cli import main
from .cmdline.exits import end_process

if __name__ == "__main__":  # not when a worker process re-imports the main module
    end_process(main())
