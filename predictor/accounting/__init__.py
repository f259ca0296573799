"""The PBS accounting-log format: records, what a finished job's attributes say, and the log files. Standard
library only: the jobobit hook reads job attributes with the same rules."""
