/* backend.c — the thin SDL_Renderer backend: draws a vw_cmds list.
 *
 * Rects and lines (as thin quads) accumulate into one vertex array that is
 * flushed with a single SDL_RenderGeometry call whenever a text or a clip
 * command interrupts the run, so a frame of many thousand boxes is a handful
 * of draw calls (on SDL's software renderer, whose triangle rasteriser is
 * slow, rects and lines go through its fill and line routines instead,
 * which SDL queues and batches itself). Text is rendered once per (font, colour, string) into a
 * texture kept in a small hash cache (cleared when it grows past its bound,
 * which only a pathological frame reaches).
 *
 * Fonts: fontconfig's match for "DejaVu Sans" / "DejaVu Sans Mono" first,
 * then the copy shipped in viewer/fonts/ (found next to the binary or the
 * source tree), so pictures look the same on every machine that has either. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_ttf.h>

#include "viewer/vw.h"

#define TCACHE 4096     /* slots (power of two) */

typedef struct tent {
    uint64_t h;         /* hash of (font, colour, text); 0 = empty */
    SDL_Texture *tex;
    int w, h_px;
    char *s;
} tent;

struct vw_backend {
    SDL_Renderer *ren;
    TTF_Font *font[VW_NFONTS];
    int line_h[VW_NFONTS];
    char path[VW_NFONTS][1024];
    tent cache[TCACHE];
    size_t ncached;
    SDL_Vertex *vx;
    int *idx;
    size_t nv, capv, ni, capi;
    int ttf_inited;
    int soft;           /* software renderer: rects and lines go through
                           SDL's fill / line routines, far faster there than
                           its triangle rasteriser */
    SDL_Surface *target;    /* the software renderer's surface, when known:
                               opaque rects are filled into it directly */
    int queued;             /* renderer calls made since the last flush */
    int clip_on;
    SDL_Rect clip;
    Uint32 *row;            /* strip32: one pixel row, and covered intervals */
    int *iv;
    size_t rowcap;
};

void vw_backend_set_target(vw_backend *b, void *surface)
{
    b->target = b->soft ? surface : NULL;
}

static int file_ok(const char *p) { return p && *p && access(p, R_OK) == 0; }

/* fc-match's file for a family; "" if fontconfig is missing. */
static void fc_match(const char *family, char *out, size_t n)
{
    out[0] = 0;
    char cmd[200];
    snprintf(cmd, sizeof cmd, "fc-match -f '%%{file}' '%s' 2>/dev/null", family);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    size_t k = fread(out, 1, n - 1, p);
    out[k] = 0;
    pclose(p);
    /* fontconfig substitutes when the family is absent: accept only DejaVu */
    if (!strstr(out, "DejaVu"))
        out[0] = 0;
}

static void find_font(const char *family, const char *file, char *out, size_t n)
{
    const char *env = getenv("NPUVIEW_FONT_DIR");
    char cand[600];
    if (env) {
        snprintf(cand, sizeof cand, "%s/%s", env, file);
        if (file_ok(cand)) {
            snprintf(out, n, "%s", cand);
            return;
        }
    }
    fc_match(family, out, n);
    if (file_ok(out))
        return;
    char *base = SDL_GetBasePath();
    const char *rel[] = { "../../viewer/fonts/", "../share/npuview/fonts/", "fonts/" };
    for (size_t i = 0; base && i < NPU_ARRAY_LEN(rel); i++) {
        snprintf(cand, sizeof cand, "%s%s%s", base, rel[i], file);
        if (file_ok(cand)) {
            snprintf(out, n, "%s", cand);
            SDL_free(base);
            return;
        }
    }
    SDL_free(base);
    snprintf(cand, sizeof cand, "viewer/fonts/%s", file);
    snprintf(out, n, "%s", file_ok(cand) ? cand : "");
}

vw_backend *vw_backend_new(SDL_Renderer *ren, float scale, npu_diag *d)
{
    vw_backend *b = npu_calloc(1, sizeof *b);
    if (!b) {
        npu_errf(d, NPU_ENOMEM, "npuview: out of memory (backend)");
        return NULL;
    }
    b->ren = ren;
    SDL_RendererInfo ri;
    b->soft = SDL_GetRendererInfo(ren, &ri) == 0 && (ri.flags & SDL_RENDERER_SOFTWARE);
    if (!TTF_WasInit() && TTF_Init() != 0) {
        npu_errf(d, NPU_EIO, "npuview: TTF_Init: %s", TTF_GetError());
        npu_free(b);
        return NULL;
    }
    b->ttf_inited = 1;
    static const char *fam[VW_NFONTS] = { "DejaVu Sans", "DejaVu Sans Mono", "DejaVu Sans" };
    static const char *file[VW_NFONTS] = { "DejaVuSans.ttf", "DejaVuSansMono.ttf", "DejaVuSans.ttf" };
    static const float pt[VW_NFONTS] = { 10.5f, 10.0f, 9.0f };
    for (int i = 0; i < VW_NFONTS; i++) {
        find_font(fam[i], file[i], b->path[i], sizeof b->path[i]);
        if (!b->path[i][0]) {
            npu_errf(d, NPU_EIO, "npuview: no font: fc-match found no \"%s\" and %s is not in viewer/fonts/ "
                     "(set NPUVIEW_FONT_DIR)", fam[i], file[i]);
            vw_backend_free(b);
            return NULL;
        }
        b->font[i] = TTF_OpenFont(b->path[i], (int)lroundf(pt[i] * (scale > 0 ? scale : 1) * 96.0f / 72.0f));
        if (!b->font[i]) {
            npu_errf(d, NPU_EIO, "npuview: %s: %s", b->path[i], TTF_GetError());
            vw_backend_free(b);
            return NULL;
        }
        TTF_SetFontHinting(b->font[i], TTF_HINTING_LIGHT);
        b->line_h[i] = TTF_FontHeight(b->font[i]);
    }
    return b;
}

static void cache_clear(vw_backend *b)
{
    for (size_t i = 0; i < TCACHE; i++)
        if (b->cache[i].h) {
            SDL_DestroyTexture(b->cache[i].tex);
            npu_free(b->cache[i].s);
            b->cache[i] = (tent){0};
        }
    b->ncached = 0;
}

void vw_backend_free(vw_backend *b)
{
    if (!b)
        return;
    cache_clear(b);
    for (int i = 0; i < VW_NFONTS; i++)
        if (b->font[i])
            TTF_CloseFont(b->font[i]);
    npu_free(b->vx);
    npu_free(b->row);
    npu_free(b->iv);
    npu_free(b->idx);
    npu_free(b);
}

const char *vw_backend_font_path(const vw_backend *b) { return b->path[0]; }

static int tm_width(void *ctx, int font, const char *s)
{
    vw_backend *b = ctx;
    int w = 0, h = 0;
    if (TTF_SizeUTF8(b->font[font % VW_NFONTS], s, &w, &h) != 0)
        return (int)strlen(s) * 7;
    return w;
}

void vw_backend_textm(vw_backend *b, vw_textm *tm)
{
    tm->ctx = b;
    tm->width = tm_width;
    for (int i = 0; i < VW_NFONTS; i++)
        tm->line_h[i] = b->line_h[i];
}

static void flush(vw_backend *b)
{
    if (b->ni)
        SDL_RenderGeometry(b->ren, NULL, b->vx, (int)b->nv, b->idx, (int)b->ni);
    b->nv = b->ni = 0;
}

static void quad(vw_backend *b, float x0, float y0, float x1, float y1, float x2, float y2, float x3, float y3,
                 uint32_t c)
{
    if (b->nv + 4 > b->capv) {
        size_t nc = b->capv ? b->capv * 2 : 16384;
        SDL_Vertex *q = npu_realloc(b->vx, nc * sizeof *q);
        if (!q)
            return;
        b->vx = q;
        b->capv = nc;
    }
    if (b->ni + 6 > b->capi) {
        size_t nc = b->capi ? b->capi * 2 : 24576;
        int *q = npu_realloc(b->idx, nc * sizeof *q);
        if (!q)
            return;
        b->idx = q;
        b->capi = nc;
    }
    SDL_Color col = { (Uint8)(c >> 24), (Uint8)(c >> 16), (Uint8)(c >> 8), (Uint8)c };
    int base = (int)b->nv;
    b->vx[b->nv++] = (SDL_Vertex){ { x0, y0 }, col, { 0, 0 } };
    b->vx[b->nv++] = (SDL_Vertex){ { x1, y1 }, col, { 0, 0 } };
    b->vx[b->nv++] = (SDL_Vertex){ { x2, y2 }, col, { 0, 0 } };
    b->vx[b->nv++] = (SDL_Vertex){ { x3, y3 }, col, { 0, 0 } };
    int id[6] = { base, base + 1, base + 2, base, base + 2, base + 3 };
    memcpy(b->idx + b->ni, id, sizeof id);
    b->ni += 6;
}

static uint64_t thash(int font, uint32_t col, const char *s)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)font ^ ((uint64_t)col << 8);
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h ? h : 1;
}

static tent *text_tex(vw_backend *b, int font, uint32_t col, const char *s)
{
    uint64_t h = thash(font, col, s);
    size_t i = (size_t)h & (TCACHE - 1);
    for (size_t k = 0; k < TCACHE; k++, i = (i + 1) & (TCACHE - 1)) {
        tent *t = &b->cache[i];
        if (!t->h)
            break;
        if (t->h == h && strcmp(t->s, s) == 0)
            return t;
    }
    if (b->ncached > TCACHE * 3 / 4) {
        cache_clear(b);
        i = (size_t)h & (TCACHE - 1);
    }
    while (b->cache[i].h)
        i = (i + 1) & (TCACHE - 1);
    SDL_Color c = { (Uint8)(col >> 24), (Uint8)(col >> 16), (Uint8)(col >> 8), (Uint8)col };
    SDL_Surface *sf = TTF_RenderUTF8_Blended(b->font[font % VW_NFONTS], s, c);
    if (!sf)
        return NULL;
    SDL_Texture *tx = SDL_CreateTextureFromSurface(b->ren, sf);
    int w = sf->w, hh = sf->h;
    SDL_FreeSurface(sf);
    if (!tx)
        return NULL;
    char *dup = npu_strdup(s);
    if (!dup) {
        SDL_DestroyTexture(tx);
        return NULL;
    }
    SDL_SetTextureBlendMode(tx, SDL_BLENDMODE_BLEND);
    b->cache[i] = (tent){ h, tx, w, hh, dup };
    b->ncached++;
    return &b->cache[i];
}

/* The target's area inside the current clip; 0 if they do not meet. */
static int target_clip(const vw_backend *b, SDL_Rect *c)
{
    *c = (SDL_Rect){ 0, 0, b->target->w, b->target->h };
    return !b->clip_on || SDL_IntersectRect(c, &b->clip, c);
}

/* a 32-bit surface whose pixels can be written without locking */
static int target_plain32(const SDL_Surface *sf) { return sf->format->BytesPerPixel == 4 && !SDL_MUSTLOCK(sf); }

static Uint32 target_px(const vw_backend *b, uint32_t rgba)
{
    return SDL_MapRGBA(b->target->format, (Uint8)(rgba >> 24), (Uint8)(rgba >> 16), (Uint8)(rgba >> 8), (Uint8)rgba);
}

/* Writing the target directly: the renderer's queued work goes first, so
 * the order of drawing stays the order of the commands. */
static void renderer_sync(vw_backend *b)
{
    if (b->queued) {
        SDL_RenderFlush(b->ren);
        b->queued = 0;
    }
}

/* SDL_FillRect of the target clipped to the current clip, with a plain
 * loop for the 32-bit surfaces of vw_render_view: most rects of a frame
 * are a pixel or two wide, where SDL's per-call setup costs more than the
 * few stores. Other formats go through SDL_FillRect. */
static void fill32(vw_backend *b, const SDL_Rect *r, Uint32 px)
{
    SDL_Surface *sf = b->target;
    SDL_Rect c, x;
    if (!target_clip(b, &c) || !SDL_IntersectRect(r, &c, &x))
        return;
    if (!target_plain32(sf)) {
        SDL_SetClipRect(sf, &c);
        SDL_FillRect(sf, &x, px);
        SDL_SetClipRect(sf, NULL);
        return;
    }
    for (int yy = x.y; yy < x.y + x.h; yy++) {
        Uint32 *row = (Uint32 *)((Uint8 *)sf->pixels + (size_t)yy * (size_t)sf->pitch) + x.x;
        for (int k = 0; k < x.w; k++)
            row[k] = px;
    }
}

/* A strip into the 32-bit target: the spans' colours are written once into
 * a row buffer (in order, later spans over earlier ones), then the covered
 * intervals are copied into every pixel row of the strip. Integer rects as
 * SDL's fill makes them: x, y truncated, w, h at least 1. Returns 0 if the
 * strip cannot be drawn this way (the caller falls back to rects). */
static int strip32(vw_backend *b, const vw_cmd *c, const vw_span *sp, size_t n)
{
    SDL_Surface *sf = b->target;
    if (!target_plain32(sf))
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((sp[i].color & 255) != 255)
            return 0;   /* translucent: blended rects */
    SDL_Rect clip;
    if (!target_clip(b, &clip))
        return 1;
    int y0 = NPU_MAX((int)c->y, clip.y), y1 = NPU_MIN((int)c->y + NPU_MAX((int)c->h, 1), clip.y + clip.h);
    if (y1 <= y0 || !n)
        return 1;
    if ((size_t)sf->w > b->rowcap) {
        Uint32 *q = npu_realloc(b->row, (size_t)sf->w * sizeof *q);
        int *iv = npu_realloc(b->iv, (size_t)sf->w * 2 * sizeof *iv);
        if (q)
            b->row = q;
        if (iv)
            b->iv = iv;
        if (!q || !iv)
            return 0;
        b->rowcap = (size_t)sf->w;
    }
    /* covered intervals, merged as they come (spans are in x order; one that
     * is not starts a fresh pass below) */
    size_t ni = 0;
    int sorted = 1, last = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        int x0 = (int)sp[i].x, x1 = x0 + NPU_MAX((int)sp[i].w, 1);
        x0 = NPU_MAX(x0, clip.x);
        x1 = NPU_MIN(x1, clip.x + clip.w);
        if (x1 <= x0)
            continue;
        Uint32 px = target_px(b, sp[i].color);
        for (int x = x0; x < x1; x++)
            b->row[x] = px;
        if (x0 < last)
            sorted = 0;
        last = x0;
        if (ni && x0 <= b->iv[2 * ni - 1]) {
            b->iv[2 * ni - 1] = NPU_MAX(b->iv[2 * ni - 1], x1);
        } else if (ni < (size_t)sf->w) {
            b->iv[2 * ni] = x0;
            b->iv[2 * ni + 1] = x1;
            ni++;
        } else {
            sorted = 0;
        }
    }
    if (!sorted)
        return 0;   /* (not made by the lanes) */
    for (int yy = y0; yy < y1; yy++) {
        Uint32 *dst = (Uint32 *)((Uint8 *)sf->pixels + (size_t)yy * (size_t)sf->pitch);
        for (size_t k = 0; k < ni; k++)
            memcpy(dst + b->iv[2 * k], b->row + b->iv[2 * k], (size_t)(b->iv[2 * k + 1] - b->iv[2 * k]) * 4);
    }
    return 1;
}

static void draw_rect(vw_backend *b, float x, float y, float w, float h, uint32_t color)
{
    if (b->target && (color & 255) == 255) {
        /* An opaque rect straight into the surface: what the software
         * renderer does for it (SDL_FillRect with the same integer
         * rect and clip) without its per-call command queue, which
         * cost more than the fill for the thousands of small rects
         * of a frame. */
        renderer_sync(b);
        SDL_Rect r = { (int)x, (int)y, NPU_MAX((int)w, 1), NPU_MAX((int)h, 1) };
        fill32(b, &r, target_px(b, color));
        return;
    }
    if (b->soft) {
        b->queued = 1;
        /* opaque fills skip blending (SDL blends every pixel otherwise) */
        SDL_SetRenderDrawBlendMode(b->ren, (color & 255) == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
        SDL_SetRenderDrawColor(b->ren, (Uint8)(color >> 24), (Uint8)(color >> 16),
                               (Uint8)(color >> 8), (Uint8)color);
        SDL_FRect r = { x, y, w, h };
        SDL_RenderFillRectF(b->ren, &r);
        return;
    }
    quad(b, x, y, x + w, y, x + w, y + h, x, y + h, color);
}

void vw_backend_draw(vw_backend *b, const vw_cmds *l)
{
    SDL_SetRenderDrawBlendMode(b->ren, SDL_BLENDMODE_BLEND);
    SDL_RenderSetClipRect(b->ren, NULL);
    b->queued = 1;  /* the caller's clear may still be queued */
    b->clip_on = 0;
    for (size_t i = 0; i < l->n; i++) {
        const vw_cmd *c = &l->c[i];
        switch (c->kind) {
        case VW_CMD_RECT:
            draw_rect(b, c->x, c->y, c->w, c->h, c->color);
            break;
        case VW_CMD_STRIP: {
            const vw_span *sp = l->sp + c->text;
            size_t n = c->color;
            if (b->target) {
                renderer_sync(b);
                if (strip32(b, c, sp, n))
                    break;
            }
            for (size_t k = 0; k < n; k++)
                draw_rect(b, sp[k].x, c->y, sp[k].w, c->h, sp[k].color);
            break;
        }
        case VW_CMD_LINE: {
            float dx = c->w - c->x, dy = c->h - c->y, len = sqrtf(dx * dx + dy * dy);
            if (len < 0.01f)
                break;
            if (b->soft) {
                b->queued = 1;
                SDL_SetRenderDrawBlendMode(b->ren, (c->color & 255) == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND);
                SDL_SetRenderDrawColor(b->ren, (Uint8)(c->color >> 24), (Uint8)(c->color >> 16),
                                       (Uint8)(c->color >> 8), (Uint8)c->color);
                SDL_RenderDrawLineF(b->ren, c->x, c->y, c->w, c->h);
                break;
            }
            /* a 1-pixel quad; axis-aligned lines sit on pixel centres */
            float nx = -dy / len * 0.5f, ny = dx / len * 0.5f;
            float ox = dx == 0 ? 0.5f : 0, oy = dy == 0 ? 0.5f : 0;
            quad(b, c->x + ox + nx, c->y + oy + ny, c->w + ox + nx, c->h + oy + ny, c->w + ox - nx, c->h + oy - ny,
                 c->x + ox - nx, c->y + oy - ny, c->color);
            break;
        }
        case VW_CMD_CLIP: {
            flush(b);
            b->queued = 1;
            if (c->w == 0 && c->h == 0) {
                SDL_RenderSetClipRect(b->ren, NULL);
                b->clip_on = 0;
            } else {
                SDL_Rect r = { (int)floorf(c->x), (int)floorf(c->y), (int)ceilf(c->w), (int)ceilf(c->h) };
                SDL_RenderSetClipRect(b->ren, &r);
                b->clip_on = 1;
                b->clip = r;
            }
            break;
        }
        case VW_CMD_TEXT: {
            flush(b);
            tent *t = text_tex(b, c->font, c->color, l->str + c->text);
            b->queued = 1;
            if (t) {
                SDL_Rect r = { (int)lroundf(c->x), (int)lroundf(c->y), t->w, t->h_px };
                SDL_RenderCopy(b->ren, t->tex, NULL, &r);
            }
            break;
        }
        }
    }
    flush(b);
    SDL_RenderSetClipRect(b->ren, NULL);
}
