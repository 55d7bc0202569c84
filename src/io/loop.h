/* loop.h -- the one place that waits.
 *
 * Child exits (pidfds), log pipes, signals and HTTP transfers are all events on one epoll
 * instance; libcurl's multi interface is driven through its socket and timer callbacks, so
 * thousands of transfers cost one epoll_wait per wake-up. Nothing in gauntlet sleeps in a
 * loop: it asks loop_iterate() to wait until something happens or a deadline passes.
 *
 * Callbacks run inside loop_iterate() on the caller's thread. A callback may add or remove
 * watches and transfers, including its own.
 */
#ifndef GAUNTLET_LOOP_H
#define GAUNTLET_LOOP_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

struct loop;

/* revents are EPOLLIN/EPOLLOUT/EPOLLHUP/EPOLLERR bits. */
typedef void (*loop_io_cb)(struct loop *l, int fd, uint32_t revents, void *userdata);
/* Called once when a transfer finishes (any result). The easy handle is already removed
 * from the multi handle; the callee owns it again. */
typedef void (*loop_transfer_cb)(struct loop *l, CURL *easy, CURLcode result, void *userdata);

int loop_new(struct loop **ret);
/* Removes every transfer (without calling their callbacks) and frees the loop. The easy
 * handles are not cleaned up: they belong to whoever added them. */
void loop_free(struct loop *l);
static inline void loop_freep(struct loop **l) { if (*l) loop_free(*l); }
#define _cleanup_loop_ _cleanup_(loop_freep)

/* Watches fd for events (EPOLLIN and/or EPOLLOUT). The loop does not own fd; unwatch it
 * before closing it. -EEXIST if fd is watched already. */
int loop_watch_fd(struct loop *l, int fd, uint32_t events, loop_io_cb cb, void *userdata);
void loop_unwatch_fd(struct loop *l, int fd);

/* Starts a transfer; done is called exactly once unless loop_remove_transfer comes first. */
int loop_add_transfer(struct loop *l, CURL *easy, loop_transfer_cb done, void *userdata);
/* Stops a transfer without calling its callback. Safe for one that already finished. */
void loop_remove_transfer(struct loop *l, CURL *easy);
/* Transfers in flight. */
size_t loop_transfers(const struct loop *l);

/* Waits until at least one event was dispatched or `until` (monotonic) passes, whichever
 * is first. Returns 0 after dispatching, -ETIME when `until` passed with nothing to do, or
 * -EINTR when a caught signal arrived (see loop_catch_signals). */
int loop_iterate(struct loop *l, usec_t until);

/* Inside a callback, when the loop first saw its fd ready: when epoll_wait returned with it,
 * or, for an fd that became ready while a batch was being handled, when the loop looked again
 * (every few callbacks of a batch); the callbacks ahead of it in the batch are the loop's
 * delay, not the data's. When a libcurl timeout was due: then. Transfers end (their
 * callbacks run) at the time of the fd on which they ended. bench times chunk arrivals with
 * it. 0 before any. */
usec_t loop_wake_time(const struct loop *l);
/* Counts the fds (and libcurl timeouts) the loop has handled: a callback's turn. Callbacks
 * of the same turn (the write callbacks of one read, the transfers it ended) see the same. */
uint64_t loop_turn(const struct loop *l);
/* The local TCP port of the libcurl socket whose turn it is, where loop_rx_stamps was on
 * when it was first watched (libcurl's CURLINFO_LOCAL_PORT of a transfer says whether the
 * turn is its own); 0: unknown, or not a libcurl socket's turn (a libcurl timeout's). libcurl,
 * given one socket's turn, may also move other transfers whose timers are due, and read their
 * sockets: their data did not come at this turn's times (loop_wake_time, loop_rx_span), which
 * are this socket's only. */
unsigned loop_turn_port(const struct loop *l);

/* On: the libcurl sockets this loop watches from now on get SO_TIMESTAMPNS, and a turn that
 * comes 20 us or more after its fd was seen ready (the loop was busy with the ones before
 * it) first asks the kernel, by two peeks, when the oldest and the newest of the unread data
 * came. Inside that turn's callbacks loop_rx_span() gives the two times (CLOCK_MONOTONIC)
 * and returns true; otherwise (a prompt turn, no timestamp, not a libcurl socket) false,
 * and loop_wake_time() is the time to use. bench turns it on for its level's loops. */
void loop_rx_stamps(struct loop *l, bool on);
bool loop_rx_span(const struct loop *l, usec_t *ret_first, usec_t *ret_last);
/* Inside a libcurl socket's turn (loop_rx_stamps on, a TCP socket): false once libcurl has
 * read, in this turn, data that came after the turn's times were taken (loop_wake_time,
 * loop_rx_span's last): it kept reading while more came, or more came before its first
 * read. That data came later, at a time nobody noted: by now. True otherwise, and where the
 * kernel does not say (no TCP_INFO). The first data a turn reads was there when it was seen
 * ready: its time holds whatever this says. */
bool loop_rx_fresh(struct loop *l);

struct msghdr;
/* The kernel's receive time (SCM_TIMESTAMPNS, CLOCK_REALTIME) in a message's control data,
 * taken to CLOCK_MONOTONIC; 0: none, or one from the future. */
usec_t loop_cmsg_rx_time(struct msghdr *m);

/* Blocks SIGINT, SIGTERM and SIGHUP for this process and reads them through a signalfd:
 * loop_iterate() then returns -EINTR and loop_signal() says which arrived. Children must
 * get an empty signal mask at spawn (supervise does). Call at most once per process. */
int loop_catch_signals(struct loop *l);
/* The first caught signal, or 0. Sticky: once set it stays set. */
int loop_signal(const struct loop *l);
/* As if signal sig had been caught: the caller's way to stop what waits on l for a reason
 * of its own (the tool's output can no longer be written: SIGPIPE). loop_signal() then
 * says sig unless a signal came first; the next loop_iterate returns -EINTR. */
void loop_interrupt(struct loop *l, int sig);

#endif
