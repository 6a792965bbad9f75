/* boardtrace-demo: an instrumented task executor that runs a small
 * transformer-like dispatch graph (embed, layernorm, matmul, softmax, gelu,
 * add) on worker threads, one graph per frame, with tracked tensor
 * allocations, messages, plots and frame marks; it prints how many of each
 * it emitted so a capture can be checked against it.
 * Usage: boardtrace-demo [-f FRAMES] [-w WORKERS] [-l LAYERS] */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <boardtrace/trace.h>

#define DIM         32 /* tensors are DIM x DIM floats */
#define MAX_NODES   256
#define MAX_INPUTS  3
#define MAX_WORKERS 16

enum kind { EMBED, LAYERNORM, MATMUL, SOFTMAX, GELU, ADD, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"embed",   "layernorm", "matmul",
                                                   "softmax", "gelu",      "add"};

/* What the program emitted (or, with tracing compiled out, would have). */
struct tally {
    unsigned long zones[KIND_COUNT];
    unsigned long frame_zones, schedule_zones;
    unsigned long messages;
    unsigned long plot_queue, plot_frame_ms, plot_tensor_bytes;
    unsigned long frames_default, frames_named;
    unsigned long allocs, frees;
};

struct node {
    enum kind kind;
    int inputs[MAX_INPUTS];
    int input_count;
    int consumers; /* nodes that read this one's output */
    int pending;   /* inputs not computed yet */
    int readers_left;
    float *out;
};

struct graph {
    struct node nodes[MAX_NODES];
    int count;
};

struct executor {
    pthread_mutex_t mutex;
    pthread_cond_t ready_cv;
    pthread_cond_t done_cv;
    struct bt_lock *lock; /* the mutex, as the profiler sees it */
    int queue[MAX_NODES];
    int head, tail;
    int remaining; /* nodes of the current frame not finished */
    int stop;
    struct graph *graph;
    long live_bytes;
    struct tally tally; /* under mutex */
};

static struct executor ex;

static void queue_lock(void)
{
    BT_LOCK_BEFORE_LOCK(ex.lock);
    pthread_mutex_lock(&ex.mutex);
    BT_LOCK_AFTER_LOCK(ex.lock);
}

static void queue_unlock(void)
{
    pthread_mutex_unlock(&ex.mutex);
    BT_LOCK_AFTER_UNLOCK(ex.lock);
}

/* pthread_cond_wait releases and retakes the mutex; so does the trace. */
static void queue_wait(pthread_cond_t *cv)
{
    BT_LOCK_AFTER_UNLOCK(ex.lock);
    pthread_cond_wait(cv, &ex.mutex);
    BT_LOCK_BEFORE_LOCK(ex.lock);
    BT_LOCK_AFTER_LOCK(ex.lock);
}

static int add_node(struct graph *g, enum kind kind, int a, int b, int c)
{
    struct node *n = &g->nodes[g->count];
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    int in[MAX_INPUTS] = {a, b, c};
    for (int i = 0; i < MAX_INPUTS; i++)
        if (in[i] >= 0) {
            n->inputs[n->input_count++] = in[i];
            g->nodes[in[i]].consumers++;
        }
    return g->count++;
}

/* embed, then per layer: attention (q, k, v, scores, softmax, context,
 * residual) and MLP (norm, up, gelu, down, residual), then the logits. */
static void build_graph(struct graph *g, int layers)
{
    g->count = 0;
    int x = add_node(g, EMBED, -1, -1, -1);
    for (int l = 0; l < layers; l++) {
        int h = add_node(g, LAYERNORM, x, -1, -1);
        int q = add_node(g, MATMUL, h, -1, -1);
        int k = add_node(g, MATMUL, h, -1, -1);
        int v = add_node(g, MATMUL, h, -1, -1);
        int s = add_node(g, MATMUL, q, k, -1);
        int p = add_node(g, SOFTMAX, s, -1, -1);
        int c = add_node(g, MATMUL, p, v, -1);
        x = add_node(g, ADD, x, c, -1);
        h = add_node(g, LAYERNORM, x, -1, -1);
        int u = add_node(g, MATMUL, h, -1, -1);
        int a = add_node(g, GELU, u, -1, -1);
        int d = add_node(g, MATMUL, a, -1, -1);
        x = add_node(g, ADD, x, d, -1);
    }
    int n = add_node(g, LAYERNORM, x, -1, -1);
    add_node(g, MATMUL, n, -1, -1);
}

static const float *input(const struct node *n, int i)
{
    return ex.graph->nodes[n->inputs[i]].out;
}

/* Kernels: each is one zone with its own source location. */
static void k_embed(float *o, int seed)
{
    BT_ZONE_NC(z, "embed", 0x4080FF, 1);
    for (int i = 0; i < DIM * DIM; i++)
        o[i] = (float)((i * 31 + seed * 17) % 97) / 97.0f - 0.5f;
    BT_ZONE_END(z);
}

static void k_layernorm(float *o, const float *x)
{
    BT_ZONE_NC(z, "layernorm", 0x40C040, 1);
    for (int r = 0; r < DIM; r++) {
        float mean = 0, var = 0;
        for (int c = 0; c < DIM; c++)
            mean += x[r * DIM + c];
        mean /= DIM;
        for (int c = 0; c < DIM; c++)
            var += (x[r * DIM + c] - mean) * (x[r * DIM + c] - mean);
        float inv = 1.0f / (float)(var / DIM + 1e-5f);
        for (int c = 0; c < DIM; c++)
            o[r * DIM + c] = (x[r * DIM + c] - mean) * inv;
    }
    BT_ZONE_END(z);
}

static void k_matmul(float *o, const float *a, const float *b)
{
    BT_ZONE_NC(z, "matmul", 0xFF8040, 1);
    for (int r = 0; r < DIM; r++)
        for (int c = 0; c < DIM; c++) {
            float acc = 0;
            for (int k = 0; k < DIM; k++)
                acc += a[r * DIM + k] * (b ? b[k * DIM + c] : (float)((k + c) % 7) * 0.1f);
            o[r * DIM + c] = acc;
        }
    char shape[48];
    int n = snprintf(shape, sizeof(shape), "%dx%d @ %dx%d", DIM, DIM, DIM, DIM);
    BT_ZONE_TEXT(z, shape, (size_t)n);
    (void)n;
    BT_ZONE_END(z);
}

static void k_softmax(float *o, const float *x)
{
    BT_ZONE_NC(z, "softmax", 0xC040C0, 1);
    for (int r = 0; r < DIM; r++) {
        float max = x[r * DIM], sum = 0;
        for (int c = 1; c < DIM; c++)
            max = x[r * DIM + c] > max ? x[r * DIM + c] : max;
        for (int c = 0; c < DIM; c++) {
            float e = 1.0f + (x[r * DIM + c] - max) * 0.5f; /* cheap, positive-ish */
            o[r * DIM + c] = e > 0 ? e : 0;
            sum += o[r * DIM + c];
        }
        for (int c = 0; c < DIM; c++)
            o[r * DIM + c] /= sum > 0 ? sum : 1;
    }
    BT_ZONE_END(z);
}

static void k_gelu(float *o, const float *x)
{
    BT_ZONE_NC(z, "gelu", 0xFFC040, 1);
    for (int i = 0; i < DIM * DIM; i++)
        o[i] = x[i] > 0 ? x[i] : x[i] * 0.1f;
    BT_ZONE_END(z);
}

static void k_add(float *o, const float *a, const float *b)
{
    BT_ZONE_NC(z, "add", 0x808080, 1);
    for (int i = 0; i < DIM * DIM; i++)
        o[i] = a[i] + b[i];
    BT_ZONE_END(z);
}

static const size_t tensor_bytes = DIM * DIM * sizeof(float);

static float *tensor_alloc(void)
{
    float *t = malloc(tensor_bytes);
    if (!t) {
        perror("boardtrace-demo: malloc");
        exit(1);
    }
    BT_ALLOC_N(t, tensor_bytes, "tensors");
    return t;
}

static void tensor_free(float *t)
{
    BT_FREE_N(t, "tensors");
    free(t);
}

static void run_node(int id, int frame)
{
    struct node *n = &ex.graph->nodes[id];
    n->out = tensor_alloc();
    switch (n->kind) {
    case EMBED:
        k_embed(n->out, frame);
        break;
    case LAYERNORM:
        k_layernorm(n->out, input(n, 0));
        break;
    case MATMUL:
        k_matmul(n->out, input(n, 0), n->input_count > 1 ? input(n, 1) : NULL);
        break;
    case SOFTMAX:
        k_softmax(n->out, input(n, 0));
        break;
    case GELU:
        k_gelu(n->out, input(n, 0));
        break;
    case ADD:
        k_add(n->out, input(n, 0), input(n, 1));
        break;
    default:
        break;
    }
}

static int current_frame;

static void *worker(void *arg)
{
    char name[32];
    snprintf(name, sizeof(name), "executor-%d", (int)(intptr_t)arg);
    BT_THREAD_NAME(name);
    queue_lock();
    for (;;) {
        while (ex.head == ex.tail && !ex.stop)
            queue_wait(&ex.ready_cv);
        if (ex.stop)
            break;
        int id = ex.queue[ex.head++ % MAX_NODES];
        int frame = current_frame;
        queue_unlock();

        run_node(id, frame);

        queue_lock();
        struct node *n = &ex.graph->nodes[id];
        ex.tally.zones[n->kind]++;
        ex.tally.allocs++;
        ex.live_bytes += (long)tensor_bytes;
        /* inputs whose last reader this was are freed; consumers may be ready */
        for (int i = 0; i < n->input_count; i++) {
            struct node *in = &ex.graph->nodes[n->inputs[i]];
            if (--in->readers_left == 0) {
                tensor_free(in->out);
                in->out = NULL;
                ex.tally.frees++;
                ex.live_bytes -= (long)tensor_bytes;
            }
        }
        for (int c = 0; c < ex.graph->count; c++) {
            struct node *m = &ex.graph->nodes[c];
            for (int i = 0; i < m->input_count; i++)
                if (m->inputs[i] == id && --m->pending == 0)
                    ex.queue[ex.tail++ % MAX_NODES] = c;
        }
        if (--ex.remaining == 0)
            pthread_cond_signal(&ex.done_cv);
        pthread_cond_broadcast(&ex.ready_cv);
    }
    queue_unlock();
    return NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void message(const char *text)
{
    BT_MESSAGE(text, strlen(text));
    ex.tally.messages++;
}

/* One frame: schedule the graph, wait for it, free what is left, report. */
static void run_frame(struct graph *g, int frame)
{
    BT_ZONE_NC(fz, "inference", 0x2060FF, 1);
    BT_ZONE_VALUE(fz, (uint64_t)frame);
    ex.tally.frame_zones++;
    double start = now_ms();
    queue_lock();
    {
        BT_ZONE_N(sz, "schedule", 1);
        ex.tally.schedule_zones++;
        current_frame = frame;
        ex.graph = g;
        ex.remaining = g->count;
        for (int i = 0; i < g->count; i++) {
            g->nodes[i].pending = g->nodes[i].input_count;
            g->nodes[i].readers_left = g->nodes[i].consumers;
            if (g->nodes[i].input_count == 0)
                ex.queue[ex.tail++ % MAX_NODES] = i;
        }
        BT_PLOT_I("ready_queue", ex.tail - ex.head);
        ex.tally.plot_queue++;
        pthread_cond_broadcast(&ex.ready_cv);
        BT_ZONE_END(sz);
    }
    while (ex.remaining > 0)
        queue_wait(&ex.done_cv);
    BT_PLOT_I("live_tensor_bytes", ex.live_bytes);
    ex.tally.plot_tensor_bytes++;
    /* the graph's outputs have no readers: free them here */
    for (int i = 0; i < g->count; i++)
        if (g->nodes[i].consumers == 0 && g->nodes[i].out) {
            tensor_free(g->nodes[i].out);
            g->nodes[i].out = NULL;
            ex.tally.frees++;
            ex.live_bytes -= (long)tensor_bytes;
        }
    queue_unlock();
    double ms = now_ms() - start;
    BT_PLOT("frame_ms", ms);
    ex.tally.plot_frame_ms++;
    if (frame % 10 == 0) {
        char text[64];
        snprintf(text, sizeof(text), "frame %d took %.2f ms", frame, ms);
        message(text);
    }
    BT_ZONE_END(fz);
    BT_FRAME_MARK_NAMED("inference");
    ex.tally.frames_named++;
    BT_FRAME_MARK;
    ex.tally.frames_default++;
}

static int parse_count(const char *arg, int low, int high, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || *end || v < low || v > high) {
        fprintf(stderr, "boardtrace-demo: %s must be a number from %d to %d, got '%s'\n", what, low,
                high, arg);
        exit(2);
    }
    return (int)v;
}

static void print_tally(const struct tally *t, int nodes_per_frame)
{
    unsigned long total = t->frame_zones + t->schedule_zones;
    for (int k = 0; k < KIND_COUNT; k++)
        total += t->zones[k];
    printf("boardtrace-demo: tracing %s, mode %d; %lu frames of %d dispatches\n",
           BT_RUNTIME_TRACING ? "on" : "compiled out (counts are what it would emit)",
           BT_TRACING_MODE, t->frames_default, nodes_per_frame);
    printf("  zones:");
    for (int k = 0; k < KIND_COUNT; k++)
        printf(" %s=%lu", kind_names[k], t->zones[k]);
    printf(" inference=%lu schedule=%lu total=%lu\n", t->frame_zones, t->schedule_zones, total);
    printf("  messages: %lu\n", t->messages);
    printf("  plot points: ready_queue=%lu live_tensor_bytes=%lu frame_ms=%lu\n", t->plot_queue,
           t->plot_tensor_bytes, t->plot_frame_ms);
    printf("  frames: default=%lu inference=%lu\n", t->frames_default, t->frames_named);
    int memory = BT_TRACING_MODE >= 2;
    printf("  memory (pool tensors): allocs=%lu frees=%lu\n", memory ? t->allocs : 0,
           memory ? t->frees : 0);
}

int main(int argc, char **argv)
{
    int frames = 50, workers = 3, layers = 2;
    int opt;
    while ((opt = getopt(argc, argv, "f:w:l:h")) != -1) {
        switch (opt) {
        case 'f':
            frames = parse_count(optarg, 1, 1000000, "-f FRAMES");
            break;
        case 'w':
            workers = parse_count(optarg, 1, MAX_WORKERS, "-w WORKERS");
            break;
        case 'l':
            layers = parse_count(optarg, 1, (MAX_NODES - 3) / 12, "-l LAYERS");
            break;
        default:
            fprintf(stderr, "usage: boardtrace-demo [-f FRAMES] [-w WORKERS] [-l LAYERS]\n");
            return opt == 'h' ? 0 : 2;
        }
    }
    BT_THREAD_NAME("demo-main");
    BT_APP_INFO("boardtrace-demo", 15);
    pthread_mutex_init(&ex.mutex, NULL);
    pthread_cond_init(&ex.ready_cv, NULL);
    pthread_cond_init(&ex.done_cv, NULL);
    BT_LOCK_ANNOUNCE(ex.lock);
    BT_LOCK_NAME(ex.lock, "ready queue", 11);
    BT_PLOT_CONFIG("live_tensor_bytes", BT_PLOT_MEMORY, 1, 1, 0);

    static struct graph g;
    build_graph(&g, layers);
    char text[96];
    snprintf(text, sizeof(text), "demo start: %d frames, %d workers, %d dispatches per frame",
             frames, workers, g.count);
    message(text);

    pthread_t th[MAX_WORKERS];
    for (int w = 0; w < workers; w++)
        pthread_create(&th[w], NULL, worker, (void *)(intptr_t)(w + 1));
    for (int f = 0; f < frames; f++)
        run_frame(&g, f);
    queue_lock();
    ex.stop = 1;
    pthread_cond_broadcast(&ex.ready_cv);
    queue_unlock();
    for (int w = 0; w < workers; w++)
        pthread_join(th[w], NULL);
    message("demo end");
    BT_LOCK_TERMINATE(ex.lock);
    print_tally(&ex.tally, g.count);
    return 0;
}
