// What every page of the status page (the fabric page, the switch view)
// shares: the document head with its style, the links at the top, the one
// inline script and the Content-Security-Policy that allows it by hash, the
// colour scale, numbers and times as text.
#pragma once

#include <string>
#include <string_view>

namespace ibfx {

// The page's only script: reloads the page every data-refresh seconds of
// <body>, keeping the scroll position (sessionStorage). Without JavaScript
// the <noscript> meta refresh does the same, minus the scroll position.
inline constexpr std::string_view kStatusScript =
    "(function(){var s=sessionStorage,k='ibfx-scroll',y=s.getItem(k);if(y!==null){"
    "s.removeItem(k);scrollTo(0,+y);}var t=+document.body.getAttribute('data-refresh');"
    "if(t>0)setTimeout(function(){s.setItem(k,String(scrollY));location.reload();},t*1000);})();";
// base64 of the SHA-256 of kStatusScript (CSP Level 3, "hash-source"); a
// unit test recomputes it, and Chromium refuses the script if it is wrong.
inline constexpr std::string_view kStatusScriptSha256 =
    "RD9/6S60Z2ZbaltMjd2BGVlCdyHQqArg1ZJLQwIDfWE=";
// No external source of any kind: the style and the script are the page's
// own, images only data: (the favicon), nothing else may load; no <base>,
// no form posts, never framed.
inline constexpr std::string_view kStatusCsp =
    "default-src 'none'; style-src 'unsafe-inline'; "
    "script-src 'sha256-RD9/6S60Z2ZbaltMjd2BGVlCdyHQqArg1ZJLQwIDfWE='; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// The colour of a stall ratio W: a viridis-like scale (perceptually uniform,
// readable with the common colour-vision deficiencies) over W in [0, 0.5],
// W >= 0.5 at its end. "#rrggbb".
std::string stall_colour(double w);
// A heatmap cell's fill: stall_colour(w), or the legend's grey for "no
// data" when W is not known; the same in every heatmap and the legend.
std::string stall_fill(bool known, double w);
// Whether text on that colour should be dark (the scale's light end).
bool stall_colour_is_light(double w);
inline constexpr double kStallScaleMax = 0.5;

// "<!DOCTYPE html>...<body data-refresh=N>" and the links to the other
// endpoints; `title` is escaped; `style` (trusted CSS) is added to the
// page's own.
void append_page_start(std::string& out, std::string_view title, std::string_view telemetry_path,
                       int refresh_seconds, std::string_view style = {});
// The script and the end of the document.
void append_page_end(std::string& out);
// A legend of the colour scale (inline SVG), with the values in text.
void append_stall_legend(std::string& out);

// Unix time as "2026-12-03 12:50:03 UTC" (empty for 0).
std::string utc_time(double seconds);
// printf("%.*f").
std::string fixed(double v, int decimals);
// ", W 0.412, U 0.950" ("U unknown" when U is not known): how each
// heatmap's tooltip (the fabric's, the one over time, a switch's ports)
// gives a port's stall ratio and utilization.
std::string stall_tooltip(double stall, bool utilization_valid, double utilization);

}  // namespace ibfx
