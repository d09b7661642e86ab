#ifndef GATEWAY_RUNNER_CONFINEMENT_H
#define GATEWAY_RUNNER_CONFINEMENT_H

/* The runner's sandbox, built before main() by an ELF constructor while the
 * process is certainly single-threaded (which unshare(CLONE_NEWUSER) and
 * fork() need). See runner_confinement.c for the layers and their order.
 *
 * Layers, by index (the names are what a manifest's "sandbox_exceptions"
 * lists and what `gateway providers` prints):
 *   0 network     a network namespace of its own (no interface but a down loopback)
 *   1 filesystem  a mount namespace and an empty root: read-only system
 *                 libraries, a private bounded /tmp, its own /proc, a few /dev nodes
 *   2 pid         a PID namespace whose init ends everything the adapter started
 *   3 ipc         IPC and UTS namespaces of its own
 *   4 syscalls    no new privileges and a seccomp-bpf allowlist (a denied call
 *                 fails with EPERM and is logged, never a silent kill)
 *   5 landlock    Landlock, where the kernel has it: with filesystem, only
 *                 /tmp writable and / read-only; without the host's network,
 *                 no TCP; no signal or abstract socket out of the runner's
 *                 domain. A kernel without Landlock leaves it absent, which
 *                 is not a refusal (the other layers hold without it).
 */
#define GW_RUNNER_LAYER_COUNT 6

const char *gw_runner_layer_name(int layer);
/* 1: the layer is in force in this process. */
int gw_runner_layer_in_force(int layer);
/* 1: the manifest named the layer in "sandbox_exceptions" (or, for network,
 * "isolation_network": "host"): it was not attempted. */
int gw_runner_layer_excepted(int layer);
/* 1: the kernel lacks the layer's feature altogether (landlock only): not
 * in force, and not a refusal. */
int gw_runner_layer_absent(int layer);
/* Why a layer is not in force (a static string; empty when it is). */
const char *gw_runner_layer_reason(int layer);

#endif
