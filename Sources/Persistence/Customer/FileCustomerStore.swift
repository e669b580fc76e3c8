import Foundation
import SegmentsDomain

/// Keeps the current customer's ids in `customer.json` in the integration's storage directory
/// (see Behaviour E1, P1).
///
/// Saves replace the file atomically and create it readable by the owner only. A damaged file is
/// logged, set aside as `customer.json.corrupt-<n>` and read as "no customer", so the SDK starts
/// with a fresh anonymous customer instead of failing (see Behaviour P2). The file is read once, on the
/// first `load()`; later reads are answered from memory.
///
/// Use one instance per directory: instances do not coordinate with each other.
public final class FileCustomerStore: CustomerStore {
    /// The file's name inside the storage directory.
    static let fileName = "customer.json"

    private let file: DocumentFile<CustomerRecord>
    private let cache = Locked(Cache())

    private struct Cache: Sendable {
        var isLoaded = false
        var customer: CustomerIds?
    }

    /// A store in `directory`, created owner-only (0700) on first use if it does not exist.
    /// Nothing is read or written until the first call.
    ///
    /// - Parameters:
    ///   - directory: the integration's storage directory, e.g.
    ///     a folder of the platform's application-support directory.
    ///     One store per file: never a directory a client of this process or another one also
    ///     uses (a client's own directory is guarded by its owner lock; this store is not).
    ///   - logger: where recovery from a damaged file is reported. Customer ids are never logged.
    public convenience init(directory: URL, logger: any SegmentsLogger) {
        self.init(storage: StorageDirectory(url: directory), logger: logger)
    }

    /// A store in `storage` (tests pass one that simulates write failures).
    init(storage: StorageDirectory, logger: any SegmentsLogger) {
        let diagnostics = StoreDiagnostics(
            logger: logger, prefix: "Tracking:", subject: "customer ids", fallback: "a new customer will be created")
        self.file = DocumentFile(directory: storage, name: Self.fileName, diagnostics: diagnostics)
    }

    /// The stored customer, or `nil` when there is none or the file was unusable (then logged).
    public func load() -> CustomerIds? {
        cache.withLock { cache in
            if !cache.isLoaded {
                cache.customer = file.read()?.customer
                cache.isLoaded = true
            }
            return cache.customer
        }
    }

    /// Replaces the stored customer durably.
    ///
    /// When the file cannot be written (a full disk), the previous file is **deleted** and
    /// ``SegmentsError`` `.storage` is thrown: the old ids must not come back after a restart — after
    /// `anonymize()` they would be a logged-out customer's hard ids. The next start then creates a
    /// new anonymous customer.
    public func save(_ customer: CustomerIds) throws {
        try cache.withLock { cache in
            try file.writeOrDelete(CustomerRecord(customer)) { deleted in
                if deleted {
                    cache.customer = nil
                    cache.isLoaded = true
                }
            }
            cache.customer = customer
            cache.isLoaded = true
        }
    }
}
