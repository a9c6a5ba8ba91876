/* app.c — the viewer's three ways to run: a window, one frame into a
 * surface (--screenshot, tests) and the benchmark (--bench). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <SDL.h>
#include <SDL_image.h>
#include <SDL_ttf.h>

#include "viewer/vw.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A software renderer on a fresh RGBA surface: no display, no video
 * subsystem, the same pixels everywhere. */
static npu_status surface_renderer(int w, int h, SDL_Surface **sf, SDL_Renderer **ren, npu_diag *d)
{
    *sf = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGBA32);
    if (!*sf)
        return npu_errf(d, NPU_ENOMEM, "npuview: cannot create a %dx%d surface: %s", w, h, SDL_GetError());
    *ren = SDL_CreateSoftwareRenderer(*sf);
    if (!*ren) {
        SDL_FreeSurface(*sf);
        *sf = NULL;
        return npu_errf(d, NPU_EIO, "npuview: software renderer: %s", SDL_GetError());
    }
    return NPU_OK;
}

npu_status vw_render_view(vw_view *v, void **out, npu_diag *d)
{
    SDL_Surface *sf;
    SDL_Renderer *ren;
    npu_status st = surface_renderer(v->w, v->h, &sf, &ren, d);
    if (st)
        return st;
    vw_backend *b = vw_backend_new(ren, v->scale, d);
    if (!b) {
        SDL_DestroyRenderer(ren);
        SDL_FreeSurface(sf);
        return d && d->status ? d->status : NPU_EIO;
    }
    vw_backend_textm(b, &v->tm);
    vw_cmds cl = {0};
    vw_draw(v, &cl);
    st = cl.oom ? npu_errf(d, NPU_ENOMEM, "npuview: out of memory drawing") : NPU_OK;
    SDL_SetRenderDrawColor(ren, 0, 0, 0, 255);
    SDL_RenderClear(ren);
    vw_backend_draw(b, &cl);
    SDL_RenderPresent(ren);
    vw_cmds_free(&cl);
    v->tm = (vw_textm){0};
    vw_backend_free(b);
    SDL_DestroyRenderer(ren);
    if (st) {
        SDL_FreeSurface(sf);
        return st;
    }
    *out = sf;
    return NPU_OK;
}

static npu_status prepare(vw_view *v, const vw_model *m, const vw_shot_opts *o, npu_diag *d)
{
    int w = o->w > 0 ? o->w : 1280, h = o->h > 0 ? o->h : 800;
    npu_status st = vw_view_init(v, m, w, h, o->scale > 0 ? o->scale : 1, d);
    if (st)
        return st;
    v->tab = o->tab;
    if (o->has_range) {
        vw_set_range(v, o->r0, o->r1);
        vw_fit(v);
    }
    return NPU_OK;
}

npu_status vw_render_surface(const vw_model *m, const vw_shot_opts *o, void **out, npu_diag *d)
{
    vw_view v;
    npu_status st = prepare(&v, m, o, d);
    if (st)
        return st;
    st = vw_render_view(&v, out, d);
    vw_view_free(&v);
    return st;
}

npu_status vw_screenshot(const vw_model *m, const vw_shot_opts *o, const char *png, npu_diag *d)
{
    void *sfv = NULL;
    npu_status st = vw_render_surface(m, o, &sfv, d);
    if (st)
        return st;
    SDL_Surface *sf = sfv;
    /* written next to the target and renamed, as every output file */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", png, (long)getpid());
    if (IMG_SavePNG(sf, tmp) != 0) {
        st = npu_errf(d, NPU_EIO, "npuview: cannot write %s: %s", png, IMG_GetError());
        remove(tmp);
    } else if (rename(tmp, png) != 0) {
        st = npu_errf(d, NPU_EIO, "npuview: cannot rename %s to %s", tmp, png);
        remove(tmp);
    }
    SDL_FreeSurface(sf);
    return st;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

npu_status vw_bench(const char *path, int w, int h, npu_buf *out, npu_diag *d)
{
    vw_model m;
    double t0 = now_s();
    npu_status st = vw_model_load(&m, path, d);
    if (st)
        return st;
    double load = now_s() - t0;
    vw_view v;
    st = vw_view_init(&v, &m, w, h, 1, d);
    if (st) {
        vw_model_free(&m);
        return st;
    }
    SDL_Surface *sf;
    SDL_Renderer *ren;
    st = surface_renderer(w, h, &sf, &ren, d);
    vw_backend *b = st ? NULL : vw_backend_new(ren, 1, d);
    if (!b) {
        if (!st) {
            SDL_DestroyRenderer(ren);
            SDL_FreeSurface(sf);
        }
        vw_view_free(&v);
        vw_model_free(&m);
        return st ? st : (d && d->status ? d->status : NPU_EIO);
    }
    vw_backend_textm(b, &v.tm);
    /* expand every core: the worst case for the lanes */
    memset(v.collapsed, 0, m.ncores);
    enum { FRAMES = 240 };
    double build[FRAMES], total[FRAMES];
    vw_cmds cl = {0};
    size_t max_cmds = 0;
    for (int f = 0; f < FRAMES; f++) {
        /* the script: zoom in 60 steps at a moving point, pan, zoom out,
         * scroll through the cores, then the other tabs */
        double x = vw_time_x0(&v) + (vw_time_x1(&v) - vw_time_x0(&v)) * (0.3 + 0.4 * (f % 7) / 6.0);
        v.mx = (int)x;
        v.my = h / 2;
        if (f < 60)
            vw_zoom_at(&v, x, 0.82);
        else if (f < 100)
            vw_pan_px(&v, (f % 20 < 10 ? 1 : -1) * 90.0);
        else if (f < 160)
            vw_zoom_at(&v, x, 1.0 / 0.82);
        else if (f < 200)
            v.scroll_y += 60, vw_pan_px(&v, 0);
        else if (f == 200)
            v.tab = VW_TAB_FLAME;
        else if (f == 215)
            v.tab = VW_TAB_HOTSPOTS;
        else if (f == 228)
            v.tab = VW_TAB_COUNTERS;
        double a = now_s();
        vw_draw(&v, &cl);
        double bb = now_s();
        SDL_RenderClear(ren);
        vw_backend_draw(b, &cl);
        SDL_RenderPresent(ren);
        double c = now_s();
        build[f] = (bb - a) * 1e3;
        total[f] = (c - a) * 1e3;
        if (cl.n > max_cmds)
            max_cmds = cl.n;
    }
    qsort(build, FRAMES, sizeof(double), cmp_d);
    qsort(total, FRAMES, sizeof(double), cmp_d);
    npu_buf_printf(out,
                   "{\"trace\":\"%s\",\"events\":%llu,\"load_s\":%.3f,\"frames\":%d,\"size\":\"%dx%d\","
                   "\"build_ms_p50\":%.3f,\"build_ms_p99\":%.3f,\"frame_ms_p50\":%.3f,\"frame_ms_p99\":%.3f,"
                   "\"frame_ms_max\":%.3f,\"max_draw_commands\":%zu,\"renderer\":\"software\"}\n",
                   path, (unsigned long long)m.n_events, load, FRAMES, w, h, build[FRAMES / 2],
                   build[FRAMES * 99 / 100], total[FRAMES / 2], total[FRAMES * 99 / 100], total[FRAMES - 1],
                   max_cmds);
    vw_cmds_free(&cl);
    v.tm = (vw_textm){0};
    vw_backend_free(b);
    SDL_DestroyRenderer(ren);
    SDL_FreeSurface(sf);
    vw_view_free(&v);
    vw_model_free(&m);
    return out->oom ? npu_errf(d, NPU_ENOMEM, "npuview: out of memory") : NPU_OK;
}

npu_status vw_run_window(const vw_model *m, int w, int h, npu_diag *d)
{
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0)
        return npu_errf(d, NPU_EIO, "npuview: no display (%s); use --screenshot for headless output",
                        SDL_GetError());
    char title[256];
    snprintf(title, sizeof title, "npuview — %s", m->meta->kernel ? m->meta->kernel : "trace");
    SDL_Window *win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h,
                                       SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!win) {
        SDL_QuitSubSystem(SDL_INIT_VIDEO);
        return npu_errf(d, NPU_EIO, "npuview: cannot open a window: %s", SDL_GetError());
    }
    SDL_Renderer *ren = SDL_CreateRenderer(win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!ren)
        ren = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    npu_status st = NPU_OK;
    if (!ren) {
        st = npu_errf(d, NPU_EIO, "npuview: no renderer: %s", SDL_GetError());
        goto out_win;
    }
    int dw, dh;
    SDL_GetRendererOutputSize(ren, &dw, &dh);
    /* HiDPI: layout in drawable pixels, fonts at the drawable's scale */
    float scale = (float)dw / (float)w;
    if (scale < 1)
        scale = 1;
    vw_view v;
    st = vw_view_init(&v, m, dw, dh, scale, d);
    if (st)
        goto out_ren;
    vw_backend *b = vw_backend_new(ren, scale, d);
    if (!b) {
        st = d && d->status ? d->status : NPU_EIO;
        vw_view_free(&v);
        goto out_ren;
    }
    vw_backend_textm(b, &v.tm);
    SDL_StartTextInput();
    vw_cmds cl = {0};
    while (!v.quit) {
        SDL_Event e;
        if (!SDL_WaitEventTimeout(&e, 100))
            continue;
        do {
            if (e.type == SDL_WINDOWEVENT && e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) {
                SDL_GetRendererOutputSize(ren, &dw, &dh);
                vw_view_resize(&v, dw, dh, v.scale);
                continue;
            }
            vw_handle_event(&v, &e);
        } while (SDL_PollEvent(&e));
        vw_draw(&v, &cl);
        SDL_SetRenderDrawColor(ren, 0, 0, 0, 255);
        SDL_RenderClear(ren);
        vw_backend_draw(b, &cl);
        SDL_RenderPresent(ren);
    }
    SDL_StopTextInput();
    vw_cmds_free(&cl);
    v.tm = (vw_textm){0};
    vw_backend_free(b);
    vw_view_free(&v);
out_ren:
    SDL_DestroyRenderer(ren);
out_win:
    SDL_DestroyWindow(win);
    SDL_QuitSubSystem(SDL_INIT_VIDEO);
    return st;
}
