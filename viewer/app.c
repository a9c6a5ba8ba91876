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

static double now_s(void) { return vw_clock_s(CLOCK_MONOTONIC); }

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
    vw_backend_set_target(b, sf);
    vw_cmds cl = {0};
    vw_draw(v, &cl);
    st = cl.oom ? npu_errf(d, NPU_ENOMEM, "npuview: out of memory drawing") : NPU_OK;
    /* no clear: every frame starts with an opaque rect over the whole
     * surface (vw_draw), so clearing first only wrote the pixels twice */
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

/* The options' starting state (tab, grouping, heat scale, range), for a
 * picture and for the window alike */
static void apply_opts(vw_view *v, const vw_shot_opts *o)
{
    v->tab = o->tab;
    v->hkey = o->hkey;
    v->heat_log = o->heat_log;
    if (o->has_range) {
        vw_set_range(v, o->r0, o->r1);
        vw_fit(v);
    }
}

static npu_status prepare(vw_view *v, const vw_model *m, const vw_shot_opts *o, npu_diag *d)
{
    int w = o->w > 0 ? o->w : 1280, h = o->h > 0 ? o->h : 800;
    npu_status st = vw_view_init(v, m, w, h, o->scale > 0 ? o->scale : 1, d);
    if (st)
        return st;
    apply_opts(v, o);
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

/* sf as a PNG file, written next to the target and renamed, as every
 * output file */
static npu_status save_png(SDL_Surface *sf, const char *png, npu_diag *d)
{
    char tmp[4200];
    npu_status st = NPU_OK;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", png, (long)getpid());
    if (IMG_SavePNG(sf, tmp) != 0) {
        st = npu_errf(d, NPU_EIO, "npuview: cannot write %s: %s", png, IMG_GetError());
        remove(tmp);
    } else if (rename(tmp, png) != 0) {
        st = npu_errf(d, NPU_EIO, "npuview: cannot rename %s to %s", tmp, png);
        remove(tmp);
    }
    return st;
}

npu_status vw_screenshot(const vw_model *m, const vw_shot_opts *o, const char *png, npu_diag *d)
{
    void *sfv = NULL;
    npu_status st = vw_render_surface(m, o, &sfv, d);
    if (st)
        return st;
    SDL_Surface *sf = sfv;
    st = save_png(sf, png, d);
    SDL_FreeSurface(sf);
    return st;
}

/* ---- a scripted window ($NPUVIEW_SCRIPT), for tests of the real window
 * under Xvfb or SDL's offscreen driver: steps separated by ';', one after
 * each drawn frame: "key:NAME" presses and releases a key (SDL's key names:
 * k, 2, Tab, Escape...), "shot:FILE.png" saves the frame the window shows
 * (the renderer's pixels, read back before it is presented), "quit" ends
 * the session (as does the end of the script). The events go through the
 * window's own event loop, as a user's would. */
static npu_status script_step(const char **pos, SDL_Renderer *ren, int dw, int dh, vw_view *v, npu_diag *d)
{
    const char *p = *pos, *end = strchr(p, ';');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    *pos = end ? end + 1 : p + n;
    char step[1024];
    if (n >= sizeof step)
        return npu_errf(d, NPU_EINVAL, "npuview: NPUVIEW_SCRIPT: a step of %zu bytes", n);
    memcpy(step, p, n);
    step[n] = 0;
    if (!strncmp(step, "key:", 4)) {
        SDL_Keycode k = SDL_GetKeyFromName(step + 4);
        if (k == SDLK_UNKNOWN)
            return npu_errf(d, NPU_EINVAL, "npuview: NPUVIEW_SCRIPT: no key named '%s'", step + 4);
        SDL_Event e;
        memset(&e, 0, sizeof e);
        e.type = SDL_KEYDOWN;
        e.key.state = SDL_PRESSED;
        e.key.keysym.sym = k;
        e.key.keysym.scancode = SDL_GetScancodeFromKey(k);
        SDL_PushEvent(&e);
        e.type = SDL_KEYUP;
        e.key.state = SDL_RELEASED;
        SDL_PushEvent(&e);
    } else if (!strncmp(step, "shot:", 5)) {
        SDL_Surface *sf = SDL_CreateRGBSurfaceWithFormat(0, dw, dh, 32, SDL_PIXELFORMAT_RGBA32);
        if (!sf)
            return npu_errf(d, NPU_ENOMEM, "npuview: cannot create a %dx%d surface", dw, dh);
        npu_status st = SDL_RenderReadPixels(ren, NULL, SDL_PIXELFORMAT_RGBA32, sf->pixels, sf->pitch) != 0
                        ? npu_errf(d, NPU_EIO, "npuview: cannot read the window back: %s", SDL_GetError())
                        : save_png(sf, step + 5, d);
        SDL_FreeSurface(sf);
        if (!st && !**pos)
            v->quit = 1;
        return st;
    } else if (!strcmp(step, "quit")) {
        v->quit = 1;
    } else if (*step) {
        return npu_errf(d, NPU_EINVAL, "npuview: NPUVIEW_SCRIPT: unknown step '%s' (key:NAME, shot:FILE, quit)",
                        step);
    }
    if (!**pos)
        v->quit = 1;
    return NPU_OK;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The scripted session of the benchmark: phases of frames, each phase a
 * view and a change applied before every frame. It covers every view: the
 * timeline at every zoom from the whole run to a few cycles (expanded and
 * collapsed cores, scrolled), a live range selection (the range changes
 * every frame, so the range table, flame graph and hotspots recompute each
 * frame as they do while the user drags), the busy and stall flame graphs,
 * the hotspot tables by every key and the counters with the roofline. */
enum { PH_ZOOM_IN, PH_PAN, PH_ZOOM_OUT, PH_SCROLL, PH_COLLAPSED, PH_DEEP, PH_SELECT, PH_FLAME, PH_FLAME_RANGE,
       PH_STALL_FLAME, PH_HOTSPOTS, PH_HOT_RANGE, PH_COUNTERS, PH__N };
static const struct { const char *name; int frames; } phases[PH__N] = {
    { "timeline-zoom-in", 60 },   { "timeline-pan", 40 },      { "timeline-zoom-out", 60 },
    { "timeline-scroll", 40 },    { "timeline-collapsed", 20 }, { "timeline-deep-zoom", 30 },
    { "range-select-live", 40 },  { "flame", 10 },             { "flame-range-live", 20 },
    { "stall-flame", 10 },        { "hotspots-all-keys", 20 }, { "hotspots-range-live", 20 },
    { "counters-range-live", 20 },
};

static void bench_step(vw_view *v, const vw_model *m, int ph, int k, int h)
{
    double x0 = vw_time_x0(v), x1 = vw_time_x1(v);
    double x = x0 + (x1 - x0) * (0.3 + 0.4 * (k % 7) / 6.0);
    double full = (double)(m->t_end - m->t_min);
    /* a growing range, as a shift-drag draws it: 5% .. 85% of the run */
    uint64_t r0 = m->t_min + (uint64_t)(full * 0.05);
    uint64_t r1 = r0 + 1 + (uint64_t)(full * (0.02 + 0.78 * (k + 1) / 40.0));
    v->mx = (int)x;
    v->my = h / 2;
    switch (ph) {
    case PH_ZOOM_IN: vw_zoom_at(v, x, 0.82); break;
    case PH_PAN: vw_pan_px(v, (k % 20 < 10 ? 1 : -1) * 90.0); break;
    case PH_ZOOM_OUT: vw_zoom_at(v, x, 1.0 / 0.82); break;
    case PH_SCROLL: v->scroll_y += 60; vw_pan_px(v, 0); break;
    case PH_COLLAPSED:
        if (k == 0) {
            memset(v->collapsed, 1, m->ncores);
            v->scroll_y = 0;
            vw_fit(v);
        }
        vw_zoom_at(v, x, k < 10 ? 0.7 : 1 / 0.7);
        break;
    case PH_DEEP:
        if (k == 0)
            memset(v->collapsed, 0, m->ncores);
        /* down to a few cycles across the window, then back */
        vw_zoom_at(v, x, k < 20 ? 0.5 : 8.0);
        break;
    case PH_SELECT:
        if (k == 0) {
            vw_fit(v);
            v->scroll_y = 0;
        }
        vw_set_range(v, r0, r1);
        v->mx = (int)vw_t_to_x(v, (double)r1);
        break;
    case PH_FLAME:
        if (k == 0) {
            vw_set_range(v, 0, 0);   /* the whole trace */
            v->tab = VW_TAB_FLAME;
        }
        break;
    case PH_FLAME_RANGE: vw_set_range(v, r0, r1 + (uint64_t)k * 1000); break;
    case PH_STALL_FLAME:
        if (k == 0) {
            vw_set_range(v, 0, 0);
            v->flame_stalls = 1;
            v->flame_dirty = 1;
        }
        break;
    case PH_HOTSPOTS:
        if (k == 0) {
            vw_set_range(v, 0, 0);
            v->tab = VW_TAB_HOTSPOTS;
        }
        if (k % 5 == 0) {
            v->hkey = (vw_hkey)(k / 5 % VW_HK__N);
            v->htab_dirty = 1;
        }
        break;
    case PH_HOT_RANGE: vw_set_range(v, r0, r1 + (uint64_t)k * 1000); break;
    case PH_COUNTERS:
        if (k == 0)
            v->tab = VW_TAB_COUNTERS;
        vw_set_range(v, r0, r1 + (uint64_t)k * 1000);
        break;
    }
}

static void pct(npu_buf *out, const char *pre, double *a, int n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_d);
    npu_buf_printf(out, "\"%s_p50\":%.3f,\"%s_p99\":%.3f,\"%s_max\":%.3f", pre, a[n / 2], pre,
                   a[(int)((n - 1) * 0.99)], pre, a[n - 1]);
}

npu_status vw_bench(const char *path, int w, int h, npu_buf *out, npu_diag *d)
{
    vw_model m;
    double t0 = now_s(), c0 = vw_clock_s(CLOCK_PROCESS_CPUTIME_ID);
    npu_status st = vw_model_load(&m, path, d);
    if (st)
        return st;
    double load = now_s() - t0, load_cpu = vw_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    vw_view v;
    double vi = now_s();
    st = vw_view_init(&v, &m, w, h, 1, d);   /* (computes the overview: not a frame) */
    vi = now_s() - vi;
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
    vw_backend_set_target(b, sf);   /* as vw_render_view (screenshots) draws */
    /* expand every core: the worst case for the lanes */
    memset(v.collapsed, 0, m.ncores);
    int nf = 0;
    for (int p = 0; p < PH__N; p++)
        nf += phases[p].frames;
    /* per frame: wall ms of the whole frame (commands + rasterise + present),
     * its CPU ms (this thread: what an idle machine would show), and the
     * wall ms of building the commands alone */
    double *wall = npu_malloc((size_t)nf * 4 * sizeof *wall);
    if (!wall) {
        st = npu_errf(d, NPU_ENOMEM, "npuview: out of memory (bench)");
        goto out;
    }
    double *cpu = wall + nf, *build = cpu + nf, *tmp = build + nf;
    vw_cmds cl = {0};
    size_t max_cmds = 0;
    int f = 0;
    npu_buf ph = {0};
    for (int p = 0; p < PH__N; p++) {
        int f0 = f;
        for (int k = 0; k < phases[p].frames; k++, f++) {
            bench_step(&v, &m, p, k, h);
            double a = now_s(), ca = vw_clock_s(CLOCK_THREAD_CPUTIME_ID);
            vw_draw(&v, &cl);
            double bb = now_s();
            vw_backend_draw(b, &cl);  /* as vw_render_view: no clear (see there) */
            SDL_RenderPresent(ren);
            wall[f] = (now_s() - a) * 1e3;
            cpu[f] = (vw_clock_s(CLOCK_THREAD_CPUTIME_ID) - ca) * 1e3;
            build[f] = (bb - a) * 1e3;
            if (cl.n > max_cmds)
                max_cmds = cl.n;
        }
        double wmax = 0, cmax = 0, csum = 0, bmax = 0;
        for (int i = f0; i < f; i++) {
            wmax = NPU_MAX(wmax, wall[i]);
            bmax = NPU_MAX(bmax, build[i]);
            cmax = NPU_MAX(cmax, cpu[i]);
            csum += cpu[i];
        }
        npu_buf_printf(&ph, "%s{\"phase\":\"%s\",\"frames\":%d,\"frame_ms_max\":%.3f,\"cpu_ms_max\":%.3f,"
                       "\"cpu_ms_mean\":%.3f,\"build_ms_max\":%.3f}", p ? "," : "", phases[p].name, f - f0, wmax,
                       cmax, csum / (f - f0), bmax);
    }
    npu_buf_printf(out,
                   "{\"trace\":\"%s\",\"events\":%llu,\"load_s\":%.3f,\"load_cpu_s\":%.3f,"
                   "\"load_decode_cpu_s\":%.3f,\"load_build_cpu_s\":%.3f,\"load_post_cpu_s\":%.3f,\"load_post_s\":%.3f,"
                   "\"load_idle_estimate_s\":%.3f,"
                   "\"view_init_ms\":%.3f,\"frames\":%d,\"size\":\"%dx%d\",",
                   path, (unsigned long long)m.n_events, load, load_cpu, m.load_decode_cpu, m.load_build_cpu,
                   m.load_post_cpu, m.load_post_wall,
                   /* what an idle 2-core machine would take: the decoding and
                    * filing threads overlap, so the longer of the two, then the
                    * part after them (its CPU on this thread: the other half
                    * runs in parallel), plus the open before the threads */
                   NPU_MAX(m.load_decode_cpu, m.load_build_cpu) + m.load_post_cpu +
                       NPU_MAX(0.0, load_cpu - m.load_decode_cpu - m.load_build_cpu - 2 * m.load_post_cpu),
                   vi * 1e3, nf, w, h);
    memcpy(tmp, build, (size_t)nf * sizeof *tmp);
    pct(out, "build_ms", tmp, nf);
    npu_buf_printf(out, ",");
    memcpy(tmp, wall, (size_t)nf * sizeof *tmp);
    pct(out, "frame_ms", tmp, nf);
    npu_buf_printf(out, ",");
    memcpy(tmp, cpu, (size_t)nf * sizeof *tmp);
    pct(out, "frame_cpu_ms", tmp, nf);
    npu_buf_printf(out, ",\"max_draw_commands\":%zu,\"renderer\":\"software\",\"phases\":[%s]}\n", max_cmds,
                   ph.data ? (const char *)ph.data : "");
    if (ph.oom)
        out->oom = 1;
    npu_buf_free(&ph);
    vw_cmds_free(&cl);
    npu_free(wall);
out:
    v.tm = (vw_textm){0};
    vw_backend_free(b);
    SDL_DestroyRenderer(ren);
    SDL_FreeSurface(sf);
    vw_view_free(&v);
    vw_model_free(&m);
    if (st)
        return st;
    return out->oom ? npu_errf(d, NPU_ENOMEM, "npuview: out of memory") : NPU_OK;
}

npu_status vw_run_window(const vw_model *m, const vw_shot_opts *o, npu_diag *d)
{
    int w = o->w > 0 ? o->w : 1280, h = o->h > 0 ? o->h : 800;
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
    apply_opts(&v, o);   /* --view, --group, --heat, --range */
    vw_backend *b = vw_backend_new(ren, scale, d);
    if (!b) {
        st = d && d->status ? d->status : NPU_EIO;
        vw_view_free(&v);
        goto out_ren;
    }
    vw_backend_textm(b, &v.tm);
    SDL_StartTextInput();
    vw_cmds cl = {0};
    const char *script = getenv("NPUVIEW_SCRIPT");
    int first = 1;
    while (!v.quit && !st) {
        SDL_Event e;
        int have = first || script ? SDL_PollEvent(&e) : SDL_WaitEventTimeout(&e, 100);
        if (!have && !first && !script)
            continue;
        first = 0;
        while (have) {
            if (e.type == SDL_WINDOWEVENT && e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) {
                SDL_GetRendererOutputSize(ren, &dw, &dh);
                vw_view_resize(&v, dw, dh, v.scale);
            } else {
                vw_handle_event(&v, &e);
            }
            have = SDL_PollEvent(&e);
        }
        vw_draw(&v, &cl);
        SDL_SetRenderDrawColor(ren, 0, 0, 0, 255);
        SDL_RenderClear(ren);
        vw_backend_draw(b, &cl);
        if (script && !v.quit)
            st = script_step(&script, ren, dw, dh, &v, d);
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
