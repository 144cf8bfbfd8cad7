/* cli: the command-line verbs (add, list, show, log, diff, cancel, serve,
 * demo, config check).  Exit statuses: 0 success, 1 the operation failed,
 * 2 bad usage or bad input (nothing was changed). */
#ifndef PADDOCK_CLI_H
#define PADDOCK_CLI_H

#define EXIT_USAGE 2

int cli_main(int argc, char **argv);

#endif
