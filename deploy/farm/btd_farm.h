/* boardtrace farm: profile one program on several boards of a LAVA lab at
 * once. LAVA schedules and reserves the boards (one job per board); while a
 * job holds its board, `boardtrace run` profiles the program on it. */
#ifndef BTD_FARM_H
#define BTD_FARM_H

/* argv[0] is "farm". Returns the process exit status. */
int btd_farm_main(int argc, char **argv);

#endif
