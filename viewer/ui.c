/* ui.c — SDL events to view-state changes. The only file of the view model
 * that knows SDL's event types; it needs no window, so tests feed it
 * synthetic SDL_Events and check the view afterwards. */
#include <string.h>

#include <SDL.h>

#include "viewer/vw.h"

static void key(vw_view *v, const SDL_KeyboardEvent *k)
{
    SDL_Keycode c = k->keysym.sym;
    int shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    double cx = (vw_time_x0(v) + vw_time_x1(v)) / 2;
    if (v->searching) {
        if (c == SDLK_RETURN || c == SDLK_KP_ENTER) {
            v->searching = 0;
            char q[64];
            snprintf(q, sizeof q, "%s", v->query);
            vw_search(v, q);
        } else if (c == SDLK_ESCAPE) {
            v->searching = 0;
            v->query[0] = 0;
        } else if (c == SDLK_BACKSPACE) {
            size_t n = strlen(v->query);
            if (n)
                v->query[n - 1] = 0;
        }
        return;
    }
    if (v->help && c != SDLK_q) {
        v->help = 0;
        return;
    }
    switch (c) {
    case SDLK_w: vw_zoom_at(v, v->mx >= vw_time_x0(v) ? v->mx : cx, 0.8); break;
    case SDLK_s: vw_zoom_at(v, v->mx >= vw_time_x0(v) ? v->mx : cx, 1.25); break;
    case SDLK_a: case SDLK_LEFT: vw_pan_px(v, -(vw_time_x1(v) - vw_time_x0(v)) * 0.15); break;
    case SDLK_d: case SDLK_RIGHT: vw_pan_px(v, (vw_time_x1(v) - vw_time_x0(v)) * 0.15); break;
    case SDLK_f: vw_fit(v); break;
    case SDLK_SLASH:
        if (shift) {
            v->help = !v->help;
        } else {
            v->searching = 1;
            v->query[0] = 0;
        }
        break;
    case SDLK_QUESTION: v->help = !v->help; break;
    case SDLK_RETURN: case SDLK_KP_ENTER: case SDLK_n: vw_search_next(v, shift ? -1 : 1); break;
    case SDLK_ESCAPE:
        if (v->tab == VW_TAB_FLAME && v->flame_zoom >= 0) {
            v->flame_zoom = v->flame.n[v->flame_zoom].parent;
        } else {
            v->has_range = 0;
            v->has_sel = 0;
            v->flame_dirty = v->htab_dirty = 1;
            v->status[0] = 0;
        }
        break;
    case SDLK_1: case SDLK_2: case SDLK_3: case SDLK_4: v->tab = (vw_tab)(c - SDLK_1); break;
    case SDLK_TAB: v->tab = (vw_tab)((v->tab + (shift ? VW_NTABS - 1 : 1)) % VW_NTABS); break;
    case SDLK_t: v->flame_stalls = !v->flame_stalls; v->flame_dirty = 1; v->flame_zoom = -1; break;
    case SDLK_i: v->flame_icicle = !v->flame_icicle; break;
    case SDLK_l: v->heat_log = !v->heat_log; break;
    case SDLK_k: v->hkey = (vw_hkey)((v->hkey + 1) % VW_HK__N); v->htab_dirty = 1; break;
    case SDLK_c: {
        int any = 0;
        for (uint32_t i = 0; i < v->m->ncores; i++)
            any |= !v->collapsed[i];
        memset(v->collapsed, any, v->m->ncores);
        vw_view_resize(v, v->w, v->h, v->scale);
        break;
    }
    case SDLK_q: v->quit = 1; break;
    default: break;
    }
}

static void click(vw_view *v, int x, int y)
{
    vw_hit h = vw_hit_test(v, x, y);
    switch (h.kind) {
    case 1: case 2:
        v->has_sel = 1;
        v->sel = h;
        break;
    case 3:
        v->collapsed[h.core] = !v->collapsed[h.core];
        vw_view_resize(v, v->w, v->h, v->scale);
        break;
    case 4:
        v->flame_zoom = (int32_t)h.index == v->flame_zoom ? v->flame.n[h.index].parent : (int32_t)h.index;
        if (v->flame_zoom == 0)
            v->flame_zoom = -1;
        break;
    case 5: v->tab = (vw_tab)h.index; break;
    case 6: v->hsort = (int)h.index; vw_table_sort(&v->htab, v->hsort); break;
    case 8: v->hkey = (vw_hkey)h.index; v->htab_dirty = 1; break;
    case 7: {
        /* overview: centre the view there */
        double full = (double)(v->m->t_end - v->m->t_min), span = v->t1 - v->t0;
        double t = v->m->t_min + (x - vw_time_x0(v)) / (vw_time_x1(v) - vw_time_x0(v)) * full;
        v->t0 = t - span / 2;
        v->t1 = t + span / 2;
        vw_pan_px(v, 0);
        break;
    }
    default:
        if (v->tab == VW_TAB_TIMELINE && y > 0 && x >= vw_time_x0(v))
            v->has_sel = 0;
        break;
    }
}

void vw_handle_event(vw_view *v, const SDL_Event *e)
{
    switch (e->type) {
    case SDL_QUIT: v->quit = 1; break;
    case SDL_KEYDOWN: key(v, &e->key); break;
    case SDL_TEXTINPUT:
        if (v->searching) {
            size_t n = strlen(v->query);
            for (const char *s = e->text.text; *s && n + 1 < sizeof v->query; s++)
                if (*s != '/' || n)
                    v->query[n++] = *s;
            v->query[n] = 0;
        }
        break;
    case SDL_MOUSEMOTION:
        v->mx = (int)(e->motion.x * v->scale);
        v->my = (int)(e->motion.y * v->scale);
        if (v->drag && !v->drag_select) {
            double dx = v->mx - v->drag_x;
            if (dx * dx > 4 || v->dragged) {
                v->dragged = 1;
                if (v->tab == VW_TAB_TIMELINE) {
                    vw_pan_px(v, -dx);
                    v->scroll_y = v->drag_sy - (float)(v->my - v->dy0);
                    vw_pan_px(v, 0);
                }
                v->drag_x = v->mx;
            }
        } else if (v->drag_select) {
            v->dragged = 1;
            vw_set_range(v, (uint64_t)NPU_MAX(0.0, v->drag_t), (uint64_t)NPU_MAX(0.0, vw_x_to_t(v, v->mx)));
        }
        break;
    case SDL_MOUSEBUTTONDOWN:
        v->mx = (int)(e->button.x * v->scale);
        v->my = (int)(e->button.y * v->scale);
        if (e->button.button != SDL_BUTTON_LEFT)
            break;
        v->drag = 1;
        v->dragged = 0;
        v->drag_x = v->mx;
        v->dy0 = v->my;
        v->drag_sy = v->scroll_y;
        v->drag_t = vw_x_to_t(v, v->mx);
        v->drag_select = v->tab == VW_TAB_TIMELINE && (SDL_GetModState() & KMOD_SHIFT) && v->mx >= vw_time_x0(v);
        break;
    case SDL_MOUSEBUTTONUP:
        v->mx = (int)(e->button.x * v->scale);
        v->my = (int)(e->button.y * v->scale);
        if (e->button.button != SDL_BUTTON_LEFT)
            break;
        if (!v->dragged)
            click(v, v->mx, v->my);
        v->drag = v->drag_select = 0;
        break;
    case SDL_MOUSEWHEEL: {
        if (v->tab != VW_TAB_TIMELINE)
            break;
        int dy = e->wheel.y, dx = e->wheel.x;
        if (e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED) {
            dy = -dy;
            dx = -dx;
        }
        /* over the lanes the wheel zooms (shift: scrolls); over the labels it scrolls */
        if (!(SDL_GetModState() & KMOD_SHIFT) && (SDL_GetModState() & KMOD_CTRL || v->mx >= vw_time_x0(v))) {
            if (dy)
                vw_zoom_at(v, v->mx >= vw_time_x0(v) ? v->mx : vw_time_x0(v), dy > 0 ? 0.8 : 1.25);
        } else {
            v->scroll_y -= dy * 40 * v->scale;
            vw_pan_px(v, 0);
        }
        if (dx)
            vw_pan_px(v, dx * 40.0);
        break;
    }
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
            vw_view_resize(v, (int)(e->window.data1 * v->scale), (int)(e->window.data2 * v->scale), v->scale);
        break;
    default: break;
    }
}
