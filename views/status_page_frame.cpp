#include "views/status_page_frame.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "base/utc_time.h"
#include "views/web_escape.h"

namespace ibfx {
namespace {

// W not known (no data): grey, outside the viridis scale.
constexpr std::string_view kNoDataColour = "#bbbbbb";

// Matplotlib's viridis sampled at nine evenly spaced points (van der Walt
// and Smith, 2015); linear interpolation between them stays close to it.
constexpr std::array<std::array<int, 3>, 9> kViridis{{{0x44, 0x01, 0x54},
                                                      {0x47, 0x2d, 0x7b},
                                                      {0x3b, 0x52, 0x8b},
                                                      {0x2c, 0x72, 0x8e},
                                                      {0x21, 0x91, 0x8c},
                                                      {0x28, 0xae, 0x80},
                                                      {0x5e, 0xc9, 0x62},
                                                      {0xad, 0xdc, 0x30},
                                                      {0xfd, 0xe7, 0x25}}};

double scale_position(double w) {
  if (!(w > 0)) return 0;  // NaN too
  return std::min(w / kStallScaleMax, 1.0);
}

constexpr std::string_view kStyle =
    "body{font-family:sans-serif;margin:1em;color:#111;background:#fff}"
    "nav a{margin-right:1em}h2{margin-top:1.2em;font-size:1.2em}"
    "table{border-collapse:collapse;font-size:.9em}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "svg text{font-size:11px;font-family:sans-serif}svg a:hover rect{stroke:#e00;stroke-width:2}"
    ".muted{color:#666}";

}  // namespace

std::string stall_fill(bool known, double w) {
  return known ? stall_colour(w) : std::string(kNoDataColour);
}

std::string stall_colour(double w) {
  const double t = scale_position(w) * static_cast<double>(kViridis.size() - 1);
  const auto i = std::min(static_cast<std::size_t>(t), kViridis.size() - 2);
  const double f = t - static_cast<double>(i);
  char out[8];
  int rgb[3];
  for (int c = 0; c < 3; ++c) {
    rgb[c] =
        static_cast<int>(std::lround(kViridis[i][c] + (kViridis[i + 1][c] - kViridis[i][c]) * f));
  }
  std::snprintf(out, sizeof out, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return out;
}

bool stall_colour_is_light(double w) { return scale_position(w) >= 0.6; }

void append_page_start(std::string& out, std::string_view title, std::string_view telemetry_path,
                       int refresh_seconds, std::string_view style) {
  const std::string refresh = std::to_string(std::max(refresh_seconds, 1));
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\">"
      "<link rel=\"icon\" href=\"data:,\"><title>";
  append_html(out, title);
  out += "</title><noscript><meta http-equiv=\"refresh\" content=\"";
  out += refresh;
  out += "\"></noscript><style>";
  out += kStyle;
  out += style;
  out += "</style></head>\n<body data-refresh=\"";
  out += refresh;
  out += "\">\n<nav><a href=\"/\">status</a><a href=\"";
  append_html(out, telemetry_path);
  out += "\">";
  append_html(out, telemetry_path);
  out +=
      "</a><a href=\"/top\">/top</a><a href=\"/events\">/events</a>"
      "<a href=\"/status.json\">/status.json</a><a href=\"/-/healthy\">/-/healthy</a>"
      "<a href=\"/-/ready\">/-/ready</a></nav>\n";
}

void append_page_end(std::string& out) {
  out += "<script>";
  out += kStatusScript;
  out += "</script>\n</body></html>\n";
}

void append_stall_legend(std::string& out) {
  constexpr int kSteps = 10;
  constexpr int kWidth = 30;
  out += "<p><svg width=\"";
  out += std::to_string(kSteps * kWidth + 150);
  out += "\" height=\"34\" role=\"img\" aria-label=\"colour scale of the stall ratio W\">";
  for (int k = 0; k <= kSteps; ++k) {
    const double w = kStallScaleMax * k / kSteps;
    const int x = k * kWidth;
    out += "<rect x=\"" + std::to_string(x) + "\" y=\"0\" width=\"" + std::to_string(kWidth) +
           "\" height=\"16\" fill=\"" + stall_colour(w) + "\"/>";
    if (k % 2 == 0) {
      out += "<text x=\"" + std::to_string(x) + "\" y=\"30\">" +
             std::to_string(static_cast<int>(std::lround(w * 100))) + (k == kSteps ? "%+" : "%") +
             "</text>";
    }
  }
  out += "<rect x=\"" + std::to_string((kSteps + 1) * kWidth + 20) + "\" y=\"0\" width=\"" +
         std::to_string(kWidth) + "\" height=\"16\" fill=\"" + std::string(kNoDataColour) +
         "\"/><text x=\"" + std::to_string((kSteps + 2) * kWidth + 26) +
         "\" y=\"12\">no data</text></svg><br>"
         "W: share of the last interval the worst port of the switch had data to send and no "
         "credit (PortXmitWait); the cell's text is W in %. A crossed cell did not answer; an "
         "outlined one holds a root of congestion.</p>\n";
}

std::string utc_time(double seconds) {
  const std::string text = utc_time_text(seconds);
  return text.empty() ? text : text + " UTC";
}

std::string fixed(double v, int decimals) {
  char out[64];
  std::snprintf(out, sizeof out, "%.*f", decimals, std::isfinite(v) ? v : 0.0);
  return out;
}

std::string stall_tooltip(double stall, bool utilization_valid, double utilization) {
  return ", W " + fixed(stall, 3) + ", U " +
         (utilization_valid ? fixed(utilization, 3) : std::string("unknown"));
}

}  // namespace ibfx
