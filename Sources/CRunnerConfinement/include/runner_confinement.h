#ifndef GATEWAY_RUNNER_CONFINEMENT_H
#define GATEWAY_RUNNER_CONFINEMENT_H

/* What the runner's confinement step found, before main(). It runs as an ELF
 * constructor, while the process is certainly single-threaded, which
 * unshare(CLONE_NEWUSER) requires. */

/* 1: in a network namespace of its own (no interface but a loopback that is down). */
int gw_runner_network_confined(void);
/* Why not, when not confined (a static string). */
const char *gw_runner_network_reason(void);

#endif
