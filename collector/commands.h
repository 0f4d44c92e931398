/* The ringside subcommands; each takes its own argv (argv[0] = its name). */
#ifndef RINGSIDE_COMMANDS_H
#define RINGSIDE_COMMANDS_H

int rs_cmd_run(int argc, char **argv);
int rs_cmd_dmesg(int argc, char **argv);
int rs_cmd_report(int argc, char **argv);
int rs_cmd_fuzz(int argc, char **argv);
int rs_cmd_replay(int argc, char **argv);
int rs_cmd_attach(int argc, char **argv);
int rs_cmd_libvirt_xml(int argc, char **argv);
int rs_cmd_qemu(int argc, char **argv);

#endif
