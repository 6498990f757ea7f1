package io.bcswitch.adapter;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.authentication.AuthenticationDataSource;
import org.apache.pulsar.broker.authentication.AuthenticationParameters;
import org.apache.pulsar.broker.authorization.AuthorizationService;
import org.apache.pulsar.broker.web.AuthenticationFilter;

/**
 * Who may call the bookie-clusters API: super-users only, decided by the broker's own authentication
 * and authorization (no separate secret). The broker's authentication filter runs before the servlet
 * when {@code authenticationEnabled=true} and rejects requests without valid credentials with 401; it
 * leaves the authenticated role on the request, which this class checks against the broker's
 * super-user roles (through a proxy: both the proxy role and the original principal must be super-users,
 * as for Pulsar's own admin endpoints).
 */
public final class BrokerAuthorization {
    /** Outcome of a check: allowed, or refused with an HTTP status and a reason. */
    public record Decision(boolean allowed, int status, String reason) {
        static final Decision ALLOW = new Decision(true, 200, null);

        static Decision refuse(int status, String reason) {
            return new Decision(false, status, reason);
        }
    }

    private static final String ORIGINAL_PRINCIPAL_HEADER = "X-Original-Principal";

    private final PulsarService pulsar;

    public BrokerAuthorization(PulsarService pulsar) {
        this.pulsar = pulsar;
    }

    /**
     * @param attribute request attributes (the servlet request's {@code getAttribute})
     * @param header    request headers (the servlet request's {@code getHeader})
     */
    public CompletableFuture<Decision> check(Function<String, Object> attribute, Function<String, String> header) {
        var conf = pulsar.getConfiguration();
        if (!conf.isAuthenticationEnabled() || !conf.isAuthorizationEnabled()) {
            return CompletableFuture.completedFuture(Decision.ALLOW);
        }
        Object role = attribute.apply(AuthenticationFilter.AuthenticatedRoleAttributeName);
        if (!(role instanceof String clientRole)) {
            // the broker's filter normally answers 401 itself; this is the fallback if it did not run
            return CompletableFuture.completedFuture(Decision.refuse(401, "authentication required"));
        }
        AuthorizationService authz = pulsar.getBrokerService().getAuthorizationService();
        AuthenticationParameters params = AuthenticationParameters.builder()
                .clientRole(clientRole)
                .originalPrincipal(header.apply(ORIGINAL_PRINCIPAL_HEADER))
                .clientAuthenticationDataSource((AuthenticationDataSource) attribute.apply(
                        AuthenticationFilter.AuthenticatedDataAttributeName))
                .build();
        return authz.isSuperUser(params).thenApply(superUser -> superUser ? Decision.ALLOW
                : Decision.refuse(403, "role '" + clientRole + "' is not a super-user; the bookie-clusters API "
                        + "requires a role listed in the broker's superUserRoles"));
    }
}
