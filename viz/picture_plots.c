/*
 * picture_plots.c — plots: labelled bar charts with an axis (paralab/picture.h's layouts; the contract in vizint.h).
 * PLACEHOLDER: draws the title only, until the renderer lands.
 */
#include "paralab/picture.h"
#include "vizint.h"

int viz_pic_bars(viz_grid *g, pl_rect r, const struct pl_picture *p, double reveal)
{
    (void)reveal;
    if (r.h < 1) return 0;
    viz_text(g, r.x, r.y, r.w, p->title, COL_TITLE, 0);
    return 1;
}

int viz_pic_bars_rows(const struct pl_picture *p, int w)
{
    (void)p;
    (void)w;
    return 1;
}
