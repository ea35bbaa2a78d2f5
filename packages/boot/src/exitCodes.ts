/**
 * Exit codes shared by every app, so that an operator reading a pod's last state knows what kind
 * of failure it was without its logs (sysexits.h numbers).
 */
export const ExitCode = {
  /** EX_CONFIG: the configuration is wrong; restarting will not help until it is changed. */
  config: 78,
  /** EX_SOFTWARE: an unhandled rejection or exception; the process exits so the pod restarts clean. */
  fault: 70,
  /** Could not start for another reason (e.g. the port is taken). */
  startup: 1,
} as const;
