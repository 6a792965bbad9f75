/* The runtime's worker thread (worker.c): started with the runtime, it
 * serves one capture session and ends at the runtime's stop. */
#ifndef BT_WORKER_H
#define BT_WORKER_H

/* The worker thread's entry point. */
void *bt_worker_main(void *arg);

#endif
