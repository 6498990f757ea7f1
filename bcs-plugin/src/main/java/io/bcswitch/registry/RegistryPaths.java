package io.bcswitch.registry;

/** Where each piece of registry state lives under the configured root. */
public record RegistryPaths(String root) {

    public RegistryPaths {
        if (root == null || !root.startsWith("/") || root.length() < 2 || root.endsWith("/")) {
            throw new IllegalArgumentException("configPath must be an absolute path without a trailing '/': " + root);
        }
        for (String seg : root.substring(1).split("/", -1)) {
            if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
                throw new IllegalArgumentException("configPath must not contain empty, '.' or '..' segments: " + root);
            }
        }
    }

    public String clusters() {
        return root + "/clusters";
    }

    public String cluster(String name) {
        return clusters() + "/" + name;
    }

    public String ranges() {
        return root + "/ranges";
    }

    public String bootstrap() {
        return root + "/bootstrap";
    }

    public String switchTarget() {
        return root + "/switch-target";
    }

    public String brokers() {
        return root + "/brokers";
    }

    public String broker(String brokerId) {
        return brokers() + "/" + brokerId;
    }
}
