package io.bcswitch.adapter;

import java.lang.reflect.Method;
import java.util.function.Supplier;

/** {@code equals}, {@code hashCode} and {@code toString} of the plugin's dynamic proxies: identity semantics. */
final class ProxyIdentity {
    private ProxyIdentity() {
    }

    static boolean handles(Method method) {
        return method.getDeclaringClass() == Object.class;
    }

    static Object invoke(Object proxy, Method method, Object[] args, Supplier<String> description) {
        return switch (method.getName()) {
            case "equals" -> proxy == args[0];
            case "hashCode" -> System.identityHashCode(proxy);
            default -> description.get();
        };
    }
}
