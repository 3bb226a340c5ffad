// plot_font.h — the bitmap font of the plot writer (plot_font.c): printable ASCII 32..126,
// 5 columns × 7 rows per glyph, one byte per row, bit 4 the leftmost column.
#ifndef DT_SIM_PLOT_FONT_H
#define DT_SIM_PLOT_FONT_H

#define DT_FONT_W 5
#define DT_FONT_H 7
// Glyphs drawn 2 rows lower than the others (their tails hang below the line).
#define DT_FONT_DESCENDERS "gpqy"
extern const unsigned char dt_font5x7[95][7];

#endif
