/*
 * The lruvec lock's units of work in seed 004's fio, by the cache state the kernel finds
 * them in (docs/journal/2026-11-30-fio-gain-mechanisms.md). A user-space analogue of
 * `pagelab calibrate`'s lru_move: 64-byte nodes standing for a struct folio's first cache
 * line (its lru links and flags), 1 Mi of them (64 MiB, beyond a last-level cache), timed in
 * the thread's CPU time. Each figure is ns a node:
 *
 *   setup     linking every node into one list in a shuffled order (calibrate times this
 *             together with its move: independent stores, which overlap)
 *   calibrate calibrate's batch as it is timed: setup, then every node moved from the head
 *             of one list to the tail of another
 *   isolate   the move alone, from the tail (isolate_lru_folios(), scan_folios()): the
 *             node was touched as its neighbour's neighbour, its next neighbour is cold
 *   activate  a node the CPU has just read (the read's folio), unlinked from the middle of
 *             the list (its two neighbours cold) and added at another list's head
 *             (folio_activate_fn()); the read itself is timed apart and subtracted
 *   add       a node the CPU has just written, added at the head of a list whose head node
 *             is the CPU's own previous add (lru_add_fn() of a just-read folio; the putback
 *             of move_folios_to_lru() after shrink_active_list()'s own isolation)
 *
 *   cc -O2 -o /tmp/lru-units examples/seeds/004/lru-units.c && /tmp/lru-units [ROUNDS]
 *
 * The figures are this host's (its caches, its memory, a virtual machine's nested page
 * walks); the ratios between them are what the journal uses. Median of ROUNDS (default 7).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (1u << 20)
#define NIL UINT32_MAX

struct node {
	uint32_t prev, next;
	uint64_t flags;
} __attribute__((aligned(64)));

static struct node *nodes;
static uint32_t *order, *pick;
static volatile uint64_t sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void shuffle(uint32_t *a)
{
	for (uint32_t i = 0; i < N; i++)
		a[i] = i;
	for (uint32_t i = N - 1; i > 0; i--) {
		uint32_t j = next_rand() % (i + 1), t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/* One list of every node, in `order`; returns its head. */
static uint32_t setup(void)
{
	for (uint32_t k = 0; k < N; k++) {
		struct node *n = &nodes[order[k]];
		n->prev = k ? order[k - 1] : NIL;
		n->next = k + 1 < N ? order[k + 1] : NIL;
		n->flags = 1;
	}
	return order[0];
}

/* Every node from the head of its list to the tail of another, as calibrate moves them. */
static void move_all(uint32_t head)
{
	uint32_t tail = NIL;
	while (head != NIL) {
		uint32_t i = head, next = nodes[i].next;
		if (next != NIL)
			nodes[next].prev = NIL;
		head = next;
		nodes[i].prev = tail;
		nodes[i].next = NIL;
		nodes[i].flags ^= 3;
		if (tail != NIL)
			nodes[tail].next = i;
		tail = i;
	}
}

static void unlink_node(uint32_t i, uint32_t *head)
{
	uint32_t p = nodes[i].prev, n = nodes[i].next;
	if (p != NIL)
		nodes[p].next = n;
	else
		*head = n;
	if (n != NIL)
		nodes[n].prev = p;
}

static void add_head(uint32_t i, uint32_t *head)
{
	nodes[i].prev = NIL;
	nodes[i].next = *head;
	if (*head != NIL)
		nodes[*head].prev = i;
	*head = i;
	nodes[i].flags ^= 3;
}

/* Reads the picked nodes (the read that precedes an activation), without moving them. */
static double read_picked(uint32_t count)
{
	double t = now();
	uint64_t s = 0;
	for (uint32_t k = 0; k < count; k++)
		s += nodes[pick[k]].flags + nodes[pick[k]].next;
	sink = s;
	return now() - t;
}

/* Reads each picked node, then moves it from the middle of list A to the head of list B. */
static double activate_picked(uint32_t head, uint32_t count)
{
	uint32_t b = NIL;
	double t = now();
	uint64_t s = 0;
	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = pick[k];
		s += nodes[i].flags + nodes[i].next;
		unlink_node(i, &head);
		add_head(i, &b);
	}
	sink = s + head;
	return now() - t;
}

/* Batches of 15 nodes written by the CPU, each batch then added at the head of one list;
 * the writes alone are timed apart and subtracted. */
static double add_hot(uint32_t count, int add)
{
	uint32_t head = NIL;
	double t = now();
	for (uint32_t k = 0; k + 15 <= count; k += 15) {
		for (uint32_t j = 0; j < 15; j++)
			nodes[pick[k + j]].flags = k;
		for (uint32_t j = 0; add && j < 15; j++)
			add_head(pick[k + j], &head);
	}
	sink = head;
	return now() - t;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	if (rounds < 1 || rounds > 99) {
		fprintf(stderr, "lru-units: ROUNDS must be 1 to 99, not %s\n", argv[1]);
		return 2;
	}
	nodes = aligned_alloc(64, sizeof(struct node) * N);
	order = malloc(sizeof(uint32_t) * N);
	pick = malloc(sizeof(uint32_t) * N);
	if (!nodes || !order || !pick) {
		fprintf(stderr, "lru-units: out of memory\n");
		return 1;
	}
	shuffle(order);
	shuffle(pick);
	const uint32_t picked = N / 16;
	double r[5][99];
	for (int k = 0; k < rounds; k++) {
		double t = now();
		uint32_t head = setup();
		r[0][k] = (now() - t) / N;
		t = now();
		move_all(head);
		double moved = now() - t;
		r[1][k] = r[0][k] + moved / N;
		r[2][k] = moved / N;
		head = setup();
		double read = read_picked(picked);
		head = setup();
		r[3][k] = (activate_picked(head, picked) - read) / picked;
		r[4][k] = (add_hot(picked, 1) - add_hot(picked, 0)) / (picked / 15 * 15);
	}
	const char *name[5] = { "setup", "calibrate", "isolate", "activate", "add" };
	printf("| unit | ns a node (median of %d) | min | max |\n|---|---|---|---|\n", rounds);
	for (int u = 0; u < 5; u++) {
		qsort(r[u], rounds, sizeof(double), cmp);
		printf("| %s | %.1f | %.1f | %.1f |\n", name[u], r[u][rounds / 2], r[u][0], r[u][rounds - 1]);
	}
	return 0;
}
