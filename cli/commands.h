/* The CLI's subcommands. Each returns the process exit status. */
#ifndef CUREDUCE_CLI_COMMANDS_H
#define CUREDUCE_CLI_COMMANDS_H

#ifdef __cplusplus
extern "C" {
#endif

int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
