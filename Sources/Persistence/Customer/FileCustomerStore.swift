import Foundation
import SegmentsDomain

/// Keeps the current customer's ids in `customer.json` in the integration's storage directory
/// (<doc:Behaviour#E1>, <doc:Behaviour#P1>).
///
/// Saves replace the file atomically and create it readable by the owner only. A damaged file is
/// logged, set aside as `customer.json.corrupt-<n>` and read as "no customer", so the SDK starts
/// with a fresh anonymous customer instead of failing (<doc:Behaviour#P2>). The file is read once,
/// on the first `load()`; later reads are answered from memory.
///
/// Use one instance per directory: instances do not coordinate with each other.
public final class FileCustomerStore: CustomerStore {
    /// The file's name inside the storage directory.
    static let fileName = "customer.json"
    /// The largest file read, and written (<doc:Behaviour#P7>): 64 KiB. A customer is a cookie and a
    /// few hard ids — `{"customerIds":{"cookie":"<uuid>","registered":"…"},"version":1}` is under
    /// 100 bytes, and ten ids of 1,000 characters each stay under 11 KiB — so 64 KiB is far above any
    /// real customer, while a file of junk costs at most one parse of 64 KiB on the caller's thread
    /// at `configure` (<doc:Behaviour#R3>), where the 8 MiB of the other documents cost hundreds of
    /// MB and seconds.
    static let maximumFileSize = 64 << 10

    private let file: DocumentFile<CustomerRecord>
    private let cache = Locked(Cache())

    private struct Cache: Sendable {
        var isLoaded = false
        var customer: CustomerIds?
        /// The file exists but could not be read yet, because protected data is not available
        /// (<doc:Behaviour#P8>): no save may replace it until it has been read.
        var unread = false
        /// ``customer`` is not written yet: a save was refused because protected data is not
        /// available, or the file is still unread (<doc:Behaviour#P8>).
        var unsaved = false
        /// The system refused the file while protected data is available (<doc:Behaviour#P8>): it
        /// is unread, and no save replaces it until a read succeeds.
        var refusal: SegmentsError?
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
    ///
    /// A store made this way has no report of protected data's availability: see
    /// <doc:Behaviour#P8> for what a refused file then means.
    public convenience init(directory: URL, logger: any SegmentsLogger) {
        self.init(storage: StorageDirectory(url: directory), logger: logger)
    }

    /// A store in `directory` whose refused files are transient only while `protectedData` reports
    /// protected data unavailable (<doc:Behaviour#P8>): the client's own store.
    package convenience init(directory: URL, logger: any SegmentsLogger, protectedData: any ProtectedDataAvailability) {
        self.init(storage: StorageDirectory(url: directory), logger: logger, refusals: StorageRefusals(protectedData: protectedData))
    }

    /// A store in `storage` (tests pass one that simulates write failures).
    init(storage: StorageDirectory, logger: any SegmentsLogger, refusals: StorageRefusals = .unreported) {
        let diagnostics = StoreDiagnostics(
            logger: logger, prefix: "Tracking:", subject: "customer ids", fallback: "a new customer will be created")
        self.file = DocumentFile(
            directory: storage, name: Self.fileName, diagnostics: diagnostics, refusals: refusals,
            maximumSize: Self.maximumFileSize)
    }

    /// Deletes the file and forgets the customer (``erase()``).
    func eraseFile() -> Bool {
        cache.withLock { cache in
            let gone = file.directory.remove(file.name)
            cache = Cache()
            cache.isLoaded = gone
            return gone
        }
    }

    /// The stored customer, or `nil` when there is none or the file was unusable (then logged).
    ///
    /// While protected data is not available (<doc:Behaviour#P8>) the file is left unread and this
    /// answers the customer saved in memory meanwhile, if any; the next call tries again. A file the
    /// system refuses while protected data is available is logged, left unread, and answered as
    /// `nil`; the next call tries again.
    public func load() -> CustomerIds? {
        cache.withLock { cache in
            if !cache.isLoaded, !cache.unsaved { read(into: &cache) }
            return cache.customer
        }
    }

    /// Reads the file now unless it was read (the caller's `load()` is then answered from memory),
    /// and throws when the system refuses it while protected data is available: `configure` fails
    /// then rather than make a new customer beside one it cannot read (<doc:Behaviour#P8>).
    ///
    /// - Throws: ``SegmentsError`` `.storage` naming `customer.json`.
    package func checkReadable() throws {
        try cache.withLock { cache in
            if !cache.isLoaded, !cache.unsaved { read(into: &cache) }
            if let refusal = cache.refusal { throw refusal }
        }
    }

    /// Replaces the stored customer durably.
    ///
    /// When the file cannot be written (a full disk), the previous file is **deleted** and
    /// ``SegmentsError`` `.storage` is thrown: the old ids must not come back after a restart — after
    /// `anonymize()` they would be a logged-out customer's hard ids. The next start then creates a
    /// new anonymous customer. A customer whose file would be larger than 64 KiB (what the store reads back) is
    /// not saved either, but the previous file is kept (nothing was written; <doc:Behaviour#P7>):
    /// ``SegmentsError`` `.storage` is thrown, and ``load()`` still answers the saved customer.
    ///
    /// While protected data is not available (<doc:Behaviour#P8>) nothing is deleted and nothing is
    /// thrown: the customer is kept in memory (``load()`` answers it) and written when protected
    /// data becomes available, by the client whose `.directory` storage this store is. A file that
    /// could not be read yet is never replaced before it has been read: one the system refuses
    /// while protected data is available makes the save throw `.storage`, and nothing is kept.
    public func save(_ customer: CustomerIds) throws {
        try cache.withLock { cache in
            // A file refused while protected data is available is read again first (its
            // permissions may be fixed); never written over unread, never kept in memory instead.
            // After a transient refusal (`unread`) only the retry reads it: its owner decides.
            if cache.refusal != nil, !cache.unread { read(into: &cache) }
            if let refusal = cache.refusal { throw refusal }
            if cache.unread {
                // The stored customer is unknown: writing now could replace it with one made only
                // because it could not be read.
                cache.customer = customer
                cache.unsaved = true
                return
            }
            do {
                try file.writeOrDelete(CustomerRecord(customer)) { deleted in
                    if deleted {
                        cache.customer = nil
                        cache.isLoaded = true
                    }
                }
            } catch let error as SegmentsError where error.isProtectedDataUnavailable {
                // A file never read (a save before the first load) must be read before the retry
                // writes over it (see Behaviour P8).
                if !cache.isLoaded { cache.unread = true }
                cache.customer = customer
                cache.isLoaded = true
                cache.unsaved = true
                return
            }
            cache.customer = customer
            cache.isLoaded = true
            cache.unsaved = false
        }
    }

    /// What ``retryAfterProtectedData()`` did.
    package enum Retry: Sendable, Equatable {
        /// Nothing was waiting for protected data, or it is still unavailable.
        case nothingNew
        /// The file that could not be read before was read now: the customer it holds, or `nil`
        /// when it turned out missing or unusable. A customer saved in memory meanwhile was not
        /// written over it: the owner decides which one is current and saves that one.
        case read(CustomerIds?)
        /// The customer kept in memory was written.
        case saved
    }

    /// Does what was refused because protected data was not available (<doc:Behaviour#P8>): reads a
    /// file that could not be read, otherwise writes a customer kept in memory. Call it on the
    /// storage queue when protected data becomes available.
    package func retryAfterProtectedData() -> Retry {
        cache.withLock { cache in
            if cache.unread {
                read(into: &cache)
                // Still unread (refused again): nothing is written over it (see Behaviour P8).
                guard !cache.unread else { return .nothingNew }
                cache.unsaved = false
                return .read(cache.customer)
            }
            guard cache.unsaved, let customer = cache.customer else { return .nothingNew }
            do {
                try file.write(CustomerRecord(customer))
            } catch {
                if let failure = file.refusals.failure(error) {
                    file.diagnostics.log(.error, "Could not save the \(file.diagnostics.subject): \(failure)")
                }
                return .nothingNew
            }
            cache.unsaved = false
            return .saved
        }
    }

    private func read(into cache: inout Cache) {
        let found = file.read()
        switch found {
        case .protectedDataUnavailable:
            cache.unread = true
            return
        case .refused(let error):
            cache.refusal = error
            return
        case .record, .absent:
            break
        }
        cache.unread = false
        cache.refusal = nil
        cache.customer = found.record?.customer
        cache.isLoaded = true
    }
}
