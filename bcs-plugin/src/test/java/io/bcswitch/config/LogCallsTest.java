package io.bcswitch.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every log call of the plugin gives as many arguments as its message has {@code {}} placeholders (or one more: the
 * exception). SLF4J does not complain about a missing one; the operator reads a message whose values are shifted
 * (found once in the cutover's give-up warning).
 */
class LogCallsTest {
    private static final Pattern CALL = Pattern.compile("\\blog\\.(trace|debug|info|warn|error)\\(");

    @Test
    void everyPlaceholderOfEveryLogCallHasItsArgument() throws IOException {
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String src = Files.readString(f);
                Matcher m = CALL.matcher(src);
                while (m.find()) {
                    List<String> args = arguments(src, m.end());
                    String format = literalText(args.get(0));
                    if (format == null) {
                        continue; // a message that is not made of literals only: not checked
                    }
                    checked++;
                    int placeholders = count(format);
                    int given = args.size() - 1;
                    if (given != placeholders && given != placeholders + 1) {
                        wrong.add(f.getFileName() + ": " + placeholders + " placeholder(s), " + given
                                + " argument(s): " + format);
                    }
                }
            }
        }
        assertTrue(checked > 100, "the scan found the log calls: " + checked);
        assertEquals(List.of(), wrong);
    }

    @Test
    void theScanCountsWhatItShould() {
        String src = "log.warn(\"a {} b {} \" + \"c {}\", x, f(y, z), \"s,)\");";
        List<String> args = arguments(src, src.indexOf('(') + 1);
        assertEquals(4, args.size(), args.toString());
        assertEquals(3, count(literalText(args.get(0))));
        assertEquals(null, literalText("\"a\" + name"));
    }

    /** The top-level arguments of the call whose argument list starts at {@code from}. */
    static List<String> arguments(String src, int from) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        StringBuilder cur = new StringBuilder();
        for (int i = from; i < src.length(); i++) {
            char c = src.charAt(i);
            if (c == '"' || c == '\'') {
                int end = i + 1;
                while (src.charAt(end) != c) {
                    end += src.charAt(end) == '\\' ? 2 : 1;
                }
                cur.append(src, i, end + 1);
                i = end;
                continue;
            }
            if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth == 0) {
                    out.add(cur.toString().trim());
                    return out;
                }
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(cur.toString().trim());
                cur.setLength(0);
                continue;
            }
            cur.append(c);
        }
        throw new IllegalStateException("unterminated call at " + from);
    }

    /** The text of a concatenation of string literals; null when anything else is in it. */
    static String literalText(String expr) {
        StringBuilder text = new StringBuilder();
        for (String part : expr.split("\\s*\\+\\s*(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)")) {
            String p = part.trim();
            if (p.length() < 2 || !p.startsWith("\"") || !p.endsWith("\"")) {
                return null;
            }
            text.append(p, 1, p.length() - 1);
        }
        return text.toString();
    }

    private static int count(String format) {
        int n = 0;
        for (int i = format.indexOf("{}"); i >= 0; i = format.indexOf("{}", i + 2)) {
            n++;
        }
        return n;
    }
}
