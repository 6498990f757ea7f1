package io.bcswitch.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.bcswitch.migration.LedgerCopier.Outcome;
import io.bcswitch.migration.LedgerCopier.Result;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.common.allocator.PoolingPolicy;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A copy is the source's whatever buffers the clients read into: with the v2 wire protocol and pooled direct
 * buffers (a broker's defaults) an entry read is a derived slice whose header is skipped by its reader index, and
 * the copy once wrote that header into every entry (found on a cluster of separate broker processes: every copy of
 * a migration failed its verification, while the suites' unpooled heap buffers hid it).
 */
class PooledBufferCopyTest extends CopierTestBase {

    @ParameterizedTest(name = "{0}, v2 wire protocol {1}")
    @CsvSource({"PooledDirect,true", "PooledDirect,false", "UnpooledHeap,true", "UnpooledHeap,false"})
    void aCopyIsItsSourceWhateverTheClientsBuffers(PoolingPolicy pooling, boolean v2) throws Exception {
        try (BookKeeper pa = migrationClient("cluster-a", pooling, v2);
             BookKeeper pb = migrationClient("cluster-b", pooling, v2)) {
            long id;
            try (WriteHandle w = pa.newCreateLedgerOp().withEnsembleSize(1).withWriteQuorumSize(1).withAckQuorumSize(1)
                    .withDigestType(DigestType.CRC32C).withPassword(PWD).execute().get()) {
                for (int i = 0; i < 3; i++) {
                    w.append(entry(i).getBytes(StandardCharsets.UTF_8));
                }
                id = w.getId();
            }
            BookKeeperLedgerCopier copier = new BookKeeperLedgerCopier(name -> CompletableFuture.completedFuture(
                    name.equals("cluster-a") ? pa : pb), io);
            Outcome out = copier.copy(id, "cluster-a", "cluster-b", bytes -> CompletableFuture.completedFuture(null))
                    .get(60, TimeUnit.SECONDS);
            assertEquals(Result.COPIED, out.result(), out.detail());
            assertEquals(pa.getLedgerMetadata(id).get().getLength(), pb.getLedgerMetadata(id).get().getLength());
            try (var r = pb.newOpenLedgerOp().withLedgerId(id).withDigestType(DigestType.CRC32C).withPassword(PWD)
                    .withRecovery(false).execute().get(); var es = r.read(0, 2)) {
                int i = 0;
                for (var e : es) {
                    assertEquals(entry(i++), new String(e.getEntryBytes(), StandardCharsets.UTF_8));
                }
            }
        }
    }
}
