//go:build linux && cgo

// Spawning threads. A pool is a few threads, created here rather than by Go,
// that carry one thread state (a shrunk bounding set, a seccomp filter) for
// their children to inherit, and clone children for the Go callers that
// queue requests. A caller waits in C for its request to be done: handing
// a request to a C thread and back costs two thread wakeups, where a
// goroutine locked to a Go thread cost three or four, since the Go scheduler
// must also hand that thread a P and give the caller's goroutine one back.
// The threads never exit (a child's parent-death signal fires when the thread
// that cloned it exits) and keep every signal blocked, so that the process's
// signals are handled by Go's threads.

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "spawn_linux.h"

#define POOL_THREAD_STACK_SIZE (256 * 1024)

struct ls_job {
	struct ls_req *req;
	int ret;
	int done;
	pthread_cond_t done_cv;
	struct ls_job *next;
};

struct ls_pool {
	pthread_mutex_t mu;
	pthread_cond_t work; // a job was queued
	struct ls_job *head, *tail;

	// The thread state, and how the last thread started applied it.
	int drop_bounding;
	uint64_t keep;
	void *filter;
	unsigned short filter_len;
	pthread_cond_t started_cv;
	int started; // 0 while a thread is starting, 1 when it serves, -1 when it failed
	int stage, err;
};

static void *pool_thread(void *arg) {
	struct ls_pool *p = arg;
	sigset_t all;
	int stage = LS_STAGE_NONE, err;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	err = ls_prepare_thread(p->drop_bounding, p->keep, p->filter, p->filter_len, &stage);

	pthread_mutex_lock(&p->mu);
	p->started = err == 0 ? 1 : -1;
	p->stage = stage;
	p->err = err;
	pthread_cond_signal(&p->started_cv);
	if (err != 0) {
		// Returning ends the thread, and what was set on it with it.
		pthread_mutex_unlock(&p->mu);
		return NULL;
	}
	for (;;) {
		struct ls_job *j;

		while (p->head == NULL)
			pthread_cond_wait(&p->work, &p->mu);
		j = p->head;
		p->head = j->next;
		if (p->head == NULL)
			p->tail = NULL;
		pthread_mutex_unlock(&p->mu);

		j->ret = j->req->standby ? ls_standby_start(j->req) : ls_start(j->req);

		pthread_mutex_lock(&p->mu);
		j->done = 1;
		pthread_cond_signal(&j->done_cv);
	}
}

// ls_pool_new starts up to *nthreads threads that apply the thread state and
// then serve ls_pool_start, and sets *nthreads to how many did. It returns
// NULL with *stage and *err set when the first thread could not start or
// apply the state (*stage is LS_STAGE_NONE when the thread could not be
// created); a later thread that fails leaves the pool with the threads that
// did start.
struct ls_pool *ls_pool_new(int drop_bounding, uint64_t keep, const void *filter,
			    unsigned short filter_len, int *nthreads, int *stage, int *err) {
	struct ls_pool *p = calloc(1, sizeof *p);
	pthread_attr_t attr;
	int i, served = 0;

	*stage = LS_STAGE_NONE;
	*err = ENOMEM;
	if (p == NULL)
		return NULL;
	if (filter_len > 0) {
		p->filter = malloc((size_t)filter_len * 8);
		if (p->filter == NULL) {
			free(p);
			return NULL;
		}
		memcpy(p->filter, filter, (size_t)filter_len * 8);
	}
	p->filter_len = filter_len;
	p->drop_bounding = drop_bounding;
	p->keep = keep;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->started_cv, NULL);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	// A spawning thread needs little stack (children get their own), not
	// the default 8 MiB of address space.
	pthread_attr_setstacksize(&attr, POOL_THREAD_STACK_SIZE);
	for (i = 0; i < *nthreads; i++) {
		pthread_t t;
		int e;

		p->started = 0;
		e = pthread_create(&t, &attr, pool_thread, p);
		if (e != 0) {
			*stage = LS_STAGE_NONE;
			*err = e;
			break;
		}
		pthread_mutex_lock(&p->mu);
		while (p->started == 0)
			pthread_cond_wait(&p->started_cv, &p->mu);
		pthread_mutex_unlock(&p->mu);
		if (p->started < 0) {
			*stage = p->stage;
			*err = p->err;
			break;
		}
		served++;
	}
	pthread_attr_destroy(&attr);
	*nthreads = served;
	if (served == 0) {
		// No thread uses p: the failed ones returned before their last
		// touch of it was released (under p->mu, which this thread then
		// took).
		free(p->filter);
		free(p);
		return NULL;
	}
	return p;
}

// ls_pool_start has one of p's threads run ls_start(r) and returns its
// result.
int ls_pool_start(struct ls_pool *p, struct ls_req *r) {
	struct ls_job j;

	memset(&j, 0, sizeof j);
	j.req = r;
	pthread_cond_init(&j.done_cv, NULL);
	pthread_mutex_lock(&p->mu);
	if (p->tail != NULL)
		p->tail->next = &j;
	else
		p->head = &j;
	p->tail = &j;
	pthread_cond_signal(&p->work);
	while (!j.done)
		pthread_cond_wait(&j.done_cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	pthread_cond_destroy(&j.done_cv);
	return j.ret;
}
