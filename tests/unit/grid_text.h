/*
 * grid_text.h — reading a pane back from the visualiser's grid in memory,
 * for the pane tests (test_pipeline_pane.c,
 * test_mesh_pane.c, test_memory_pane.c). Include after viz/vizint.h.
 */
#ifndef TEST_GRID_TEXT_H
#define TEST_GRID_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Row y of g from x, w cells, as UTF-8 (cut to fit cap). */
static inline void row_text(const viz_grid *g, int y, int x, int w, char *out, size_t cap)
{
    size_t n = 0;
    for (int i = x; i < x + w && n + 5 < cap; i++) {
        uint32_t c = g->cells[y * g->w + i].ch;
        if (c < 0x80)
            out[n++] = (char)c;
        else if (c < 0x800) {
            out[n++] = (char)(0xC0 | c >> 6);
            out[n++] = (char)(0x80 | (c & 0x3F));
        } else {
            out[n++] = (char)(0xE0 | c >> 12);
            out[n++] = (char)(0x80 | (c >> 6 & 0x3F));
            out[n++] = (char)(0x80 | (c & 0x3F));
        }
    }
    out[n] = '\0';
}

/* The cell at (x, y). */
static inline const viz_cell *cell(const viz_grid *g, int x, int y)
{
    return &g->cells[y * g->w + x];
}

#endif
