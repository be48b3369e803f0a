/*
 * fuzz/trace.c — libFuzzer target: the trace reader, as paralab-viz uses it.
 *
 * Each input is a trace file (Chrome trace JSON, as a lab's --trace writes
 * it). It goes through what `paralab-viz FILE.json` does with a file
 * before the terminal (viz/app.c, pl_viz_replay): viz_read_trace, the
 * replay's plan, the model with the file's matrices, pipeline, mesh and
 * ZeRO run, every step of the replay applied in order and the screen drawn
 * into a grid in memory (80x24 and 120x40, UTF-8 and ASCII) midway and at
 * the end; then `paralab-viz --check FILE.json` (pl_viz_check_trace).
 *
 * A file the reader refuses must come with a message naming the file; one
 * it accepts must have events within the ranks and lanes it allows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../viz/vizint.h"
#include "memfile.h"
#include "paralab/viz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* As app.c's clamp_view: the timeline follows the newest event. */
static void clamp_view(viz_view *v, const viz_model *m)
{
    int c = v->modeled;
    double lo = m->t_lo[c], hi = m->t_hi[c];
    if (hi < lo) return;
    if (v->span <= 0) v->span = hi - lo > 0 ? hi - lo : 1e-6;
    v->t_end = hi;
    if (v->t_end < lo + v->span * 0.1) v->t_end = lo + v->span * 0.1;
}

static void draw(viz_grid *g, const viz_model *m, viz_view *v, unsigned panes, int w, int h,
                 int utf8)
{
    FUZZ_CHECK(viz_grid_resize(g, w, h) == 0, "grid %dx%d", w, h);
    g->utf8 = utf8;
    clamp_view(v, m);
    pl_layout lay;
    pl_viz_layout_stages(w, h, v->ndev, m->pp.have_stage_rank ? m->pp.stages : 0, panes,
                         viz_narration_rows(v, w - 2), &lay);
    viz_render(g, &lay, m, v);
    char *text = viz_grid_text(g);
    FUZZ_CHECK(text != NULL, "viz_grid_text");
    free(text);
}

static void replay(viz_trace *t)
{
    viz_item *items;
    size_t nitems, *first;
    int nsteps = viz_replay_plan(t, &items, &nitems, &first);
    FUZZ_CHECK(nsteps >= 1, "viz_replay_plan: %d steps", nsteps);
    FUZZ_CHECK(first[nsteps] == nitems, "the plan's steps hold %zu of %zu items", first[nsteps],
               nitems);
    viz_model *m = malloc(sizeof *m);
    FUZZ_CHECK(m != NULL, "out of memory");
    viz_model_init(m, t->nranks);
    m->stream_lanes = t->stream_lanes;
    char err[256];
    if (viz_model_set_matrices(m, t->matrices, t->nmatrices, t->tp, err, sizeof err))
        t->nmatrices = 0;
    if (t->pipeline.stages > 0) viz_model_set_pipeline(m, &t->pipeline, err, sizeof err);
    if (t->mesh.dp > 0) viz_model_set_mesh(m, &t->mesh, err, sizeof err);
    if (t->zero.ranks > 0) viz_model_set_zero(m, &t->zero, err, sizeof err);
    /* every pane the replay may show */
    unsigned panes = t->panes ? t->panes : (1u << PL_NUM_PANES) - 1;
    if (m->mesh.dp < 1) panes &= ~PL_PANE_BIT(PL_PANE_MESH);
    if (m->zero.ranks < 1) panes &= ~PL_PANE_BIT(PL_PANE_MEMORY);
    if (t->npictures) panes |= PL_PANE_BIT(PL_PANE_PICTURE);
    viz_view v = {.title = t->title[0] ? t->title : "fuzz",
                  .recorded = 1,
                  .modeled = t->modeled,
                  .follow = 1,
                  .ndev = t->nranks,
                  .focus = PL_PANE_NARRATION,
                  .steps = t->steps > nsteps ? t->steps : nsteps,
                  .mode = "replay",
                  .span = 0};
    viz_grid g = {0};
    viz_cursor cur = {1, 0};
    size_t shown = 0;
    int drawn = 0;
    for (;;) { /* a step at a time, as the space key moves the replay */
        size_t want = viz_replay_shown(first, nsteps, cur);
        FUZZ_CHECK(want >= shown && want <= nitems, "shown %zu, then %zu of %zu", shown, want,
                   nitems);
        for (; shown < want; shown++) viz_replay_apply(m, t, &items[shown]);
        if (t->nmarks) {
            FUZZ_CHECK(cur.step >= 1 && cur.step <= t->nmarks, "step %d of %d marks", cur.step,
                       t->nmarks);
            v.step = t->marks[cur.step - 1].step;
            snprintf(v.narration, sizeof v.narration, "[%d] %s", v.step,
                     t->marks[cur.step - 1].text);
        } else
            v.step = cur.step;
        if (!drawn && cur.step >= (nsteps + 1) / 2) {
            draw(&g, m, &v, panes, 80, 24, 1);
            drawn = 1;
        }
        if (viz_replay_done(cur, nsteps)) break;
        viz_replay_next(&cur, nsteps);
    }
    FUZZ_CHECK(shown == nitems, "the replay showed %zu of %zu items", shown, nitems);
    draw(&g, m, &v, panes, 80, 24, 0);
    draw(&g, m, &v, panes, 120, 40, 1);
    viz_grid_free(&g);
    viz_model_free(m);
    free(m);
    free(items);
    free(first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_memfile(data, size);
    viz_trace t;
    char err[1024] = "";
    if (viz_read_trace(path, &t, err, sizeof err)) {
        FUZZ_CHECK(!strncmp(err, path, strlen(path)), "a refusal that does not name the file: '%s'",
                   err);
        char msg[1024] = "";
        FUZZ_CHECK(pl_viz_check_trace(path, msg, sizeof msg) == 2,
                   "--check of a file the reader refuses: '%s'", msg);
        return 0;
    }
    FUZZ_CHECK(t.nranks >= 0 && t.nranks <= PL_MAX_RANKS, "%d ranks", t.nranks);
    for (size_t i = 0; i < t.nev; i++)
        FUZZ_CHECK(t.ev[i].rank >= 0 && t.ev[i].rank < t.nranks && t.ev[i].lane < PL_NUM_LANES &&
                       t.ev[i].kind < PL_NUM_EVENT_KINDS,
                   "event %zu: rank %d of %d, lane %d, kind %d", i, (int)t.ev[i].rank, t.nranks,
                   (int)t.ev[i].lane, (int)t.ev[i].kind);
    replay(&t);
    viz_trace_free(&t);
    char msg[1024] = "";
    int rc = pl_viz_check_trace(path, msg, sizeof msg);
    FUZZ_CHECK(rc == 0 || rc == 1, "--check of a file the reader accepts: %d, '%s'", rc, msg);
    return 0;
}
