package io.bcswitch.cli;

import java.util.ArrayList;
import java.util.List;

/** A plain text table with columns padded to their widest cell, for human output. */
final class Table {
    private final List<String[]> rows = new ArrayList<>();

    Table(String... header) {
        rows.add(header);
    }

    Table row(Object... cells) {
        String[] r = new String[cells.length];
        for (int i = 0; i < cells.length; i++) {
            r[i] = cells[i] == null ? "-" : String.valueOf(cells[i]);
        }
        rows.add(r);
        return this;
    }

    @Override
    public String toString() {
        int cols = rows.get(0).length;
        int[] width = new int[cols];
        for (String[] r : rows) {
            for (int i = 0; i < cols && i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < cols; i++) {
                String cell = i < r.length ? r[i] : "";
                line.append(i == cols - 1 ? cell : String.format("%-" + width[i] + "s  ", cell));
            }
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }

    /** {@code [########----------]  4/10} */
    static String progressBar(int done, int total, int width) {
        if (total <= 0) {
            return "[" + "#".repeat(width) + "]";
        }
        int filled = (int) Math.round(width * Math.min(1.0, (double) done / total));
        return "[" + "#".repeat(filled) + "-".repeat(width - filled) + "]";
    }
}
