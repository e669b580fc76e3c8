import Foundation
import SegmentsDomain

// The values the lifecycle machine's states and transitions carry: what one configuration holds,
// the load it waits for, the actions it decides, what a configure or stop must see done before it
// returns, and what a read may be answered from. The machine and its transitions are in
// LifecycleStateMachine.swift.
extension LifecycleStateMachine {
    /// What one configuration holds.
    struct Configured: Sendable {
        /// The configuration's ports, fixed for its life, behind one reference: a look at the
        /// configuration (the cache hit on the app's thread) copies one reference, not the ten
        /// the ports hold.
        private let portsBox: PortsBox
        var ports: SegmentationEngine.Ports { portsBox.ports }
        var customer: CustomerIds
        var baseline: SegmentBaseline
        /// When `baseline.snapshot` was fetched on the monotonic clock; `nil` for one another
        /// process fetched, whose wall-clock `fetchedAt` is all there is (<doc:Behaviour#T10>).
        var snapshotUptime: TimeInterval?
        /// The customer configure made because none was known; while it is still the current one,
        /// a stored customer read later (its file was refused for lack of protected data) replaces
        /// it (<doc:Behaviour#P8>).
        var madeAtConfigure: CustomerIds? = nil

        init(
            ports: SegmentationEngine.Ports, customer: CustomerIds, baseline: SegmentBaseline, snapshotUptime: TimeInterval?,
            madeAtConfigure: CustomerIds?
        ) {
            portsBox = PortsBox(ports)
            self.customer = customer
            self.baseline = baseline
            self.snapshotUptime = snapshotUptime
            self.madeAtConfigure = madeAtConfigure
        }
    }

    /// Immutable, so sharing it between copies of a configuration keeps their value semantics. It
    /// goes with the configuration: released after the lock, as the state it was in.
    private final class PortsBox: Sendable {
        let ports: SegmentationEngine.Ports
        init(_ ports: SegmentationEngine.Ports) { self.ports = ports }
    }

    /// The baseline load a configuration waits for.
    struct BaselineLoad: Sendable {
        let id: Int
        /// A reload was requested (or was pending at configure) while it loaded.
        var reloadOwed: Bool
        /// The configuration changed integration or storage, so listeners must hear the new one
        /// (<doc:Behaviour#T2>).
        var otherIntegration: Bool
        /// Anonymize deleted the baseline while it loaded: the loaded one is stale.
        var discardLoaded: Bool
        /// When (monotonic) the app last returned to the foreground, with listeners, while it
        /// loaded: whether that return owes a reload depends on the age of the baseline being
        /// loaded (<doc:Behaviour#T11>), decided once it is in.
        var returnedToForeground: TimeInterval? = nil
        /// The first request of a burst the previous configuration was debouncing: the reload
        /// owed again still starts at most the max wait after it (<doc:Behaviour#T5>,
        /// <doc:Behaviour#T6>).
        var burstStarted: TimeInterval?
    }

    /// What the lifecycle decided.
    enum Action: Sendable {
        case log(LogLevel, String)
        /// Saves the customer; `storageID` is reported back with ``customerSaved(in:)``.
        case saveCustomer(CustomerIds, to: any CustomerStore, storageID: String?)
        case saveBaseline(SegmentBaseline, to: any SegmentBaselineStore)
        /// Load the baseline on the storage queue and hand it to ``baselineLoaded(_:_:at:)``
        /// (<doc:Behaviour#R3>).
        case loadBaseline(Int, from: any SegmentBaselineStore)
        /// Apply a flushing mode to a tracking pipeline (<doc:Behaviour#E2>).
        case setFlushingMode(TrackingPipeline, FlushingMode)
        /// Queue the load of a new configuration's event queue, behind its baseline's
        /// (<doc:Behaviour#R3>) — once every pipeline in `after`, ended pipelines of this client on
        /// the same storage, is settled: the flush one had begun runs on after its end and removes
        /// the items it delivers, which the new one must not load and upload again
        /// (<doc:Behaviour#E4>, <doc:Behaviour#A4>, <doc:Behaviour#E5>).
        case startTracking(TrackingPipeline, after: [TrackingPipeline])
        /// Every write the ended configuration decided has been queued: its storage's next owner
        /// may read once they are done.
        case storageWritesQueued(any StorageHandOver)
        /// On the storage queue, which waits for the previous owner's writes before anything of
        /// this configuration: report ``customerSaved(in:)`` for the customer handed over with the
        /// storage, which the file holds once those writes are done (<doc:Behaviour#P5>,
        /// <doc:Behaviour#R1>).
        case handedOverCustomerWritten(storageID: String)
        /// Report ``trackingSettled(_:)`` once this ended pipeline is settled (its last flush
        /// ended, its removals queued).
        case watchSettled(TrackingPipeline)
        /// Redo on the storage queue what the configuration's storage refused before protected
        /// data was available; a stored customer read is handed to
        /// ``SegmentationStateMachine/storedCustomerRead(_:in:at:)``, stored items to `tracking`
        /// (<doc:Behaviour#P8>).
        case redoRefusedStorage(any RefusedStorageRedo, storageID: String, tracking: TrackingPipeline?)
        /// On the storage queue: stop `tracking` (a last flush still running is cut short), then
        /// delete what the ended configuration stored, the items `tracking` held included, and
        /// report with ``erased(_:)`` (<doc:Behaviour#A3>).
        case erase(Int, eraser: (any StoredDataEraser)?, tracking: TrackingPipeline?)
        /// Call these on the main queue once the disk work queued so far on the storage queue is
        /// done (<doc:Behaviour#A3>, <doc:Behaviour#A5>).
        case completeAfterStorageWork([LifecycleCompletion])
        /// Call these on the main queue: what they wait for is done.
        case complete([LifecycleCompletion])
    }

    /// A stop that deletes the stored data, from its decision until the deletion is done
    /// (<doc:Behaviour#A3>): while it is pending, a `configure` on the storage it covers starts a
    /// new customer without reading the old one, and has the deletion carried out first.
    struct Erasure: Sendable {
        let id: Int
        /// The storage it deletes: a configuration's ``SegmentationEngine/Ports/storageID``, or
        /// the default storage's prefix (a stop before any configure); `nil` for memory.
        let storage: String?
        let eraser: (any StoredDataEraser)?
        /// The ended configuration's pipeline: its last flush runs before the deletion.
        let tracking: TrackingPipeline?
        /// The storage's hand-over: its writes are marked done once the deletion is (P5).
        let handOver: (any StorageHandOver)?
        /// Whether the deletion is queued on the storage queue (the last flush ended, or a
        /// configure on the same storage came first).
        var queued: Bool
        var completions: [LifecycleCompletion]

        /// Whether the deletion covers `storageID`.
        func covers(_ storageID: String?) -> Bool {
            guard let storage, let storageID else { return false }
            return storageID == storage || storageID.hasPrefix(storage.hasSuffix("/") ? storage : storage + "/")
        }

        var action: Action { .erase(id, eraser: eraser, tracking: tracking) }
    }

    /// What the end of a configuration — stopped, replaced, or its client released — leaves for
    /// the call that ended it to carry out once its transition returned, before that call returns
    /// (<doc:Behaviour#P5>): the app's next call may give the folder to another client, so no upload
    /// of the old pipeline may start after it, and the folder must be free by then.
    struct Ending: Sendable {
        /// The pipeline to stop: its items stay on disk.
        var tracking: TrackingPipeline?
        /// The pipeline of the configuration that replaced this one on the same storage: the
        /// flushes this one was asked for join it (<doc:Behaviour#E5>).
        var successor: TrackingPipeline?
        /// The storage to give back, with the customer the configuration ended with.
        var storage: (handOver: any StorageHandOver, lastCustomer: CustomerIds)?
        /// A stop that deletes the stored data (<doc:Behaviour#A3>): the ended pipeline's last
        /// flush, to start; when it ends, the caller reports
        /// ``SegmentationStateMachine/lastFlushEnded(_:)`` with `erasure`.
        var lastFlush: (tracking: TrackingPipeline, erasure: Int)?
        /// What the first configure decided for the calls made before it: queued by the caller of
        /// `configure` after the rest, before it returns (<doc:Behaviour#E1>).
        var replay: WaitingReplay?

        /// Stops the pipeline, then frees the storage.
        func carryOut() {
            tracking?.stop(handingFlushesTo: successor)
            if let storage { storage.handOver.release(endingWith: storage.lastCustomer) }
        }
    }

    /// What `configure` decided.
    enum ConfigureOutcome: Sendable, Equatable {
        /// Configured; the previous configuration's ending, if it ended, for the caller.
        case configured(Ending)
        /// The customer is not known in memory: read `ports.customerStore` (off the lock) and
        /// configure again with it.
        case needsStoredCustomer
        /// The customer has no cookie: configure again with a new one.
        case needsNewCookie

        /// Outcomes compare by their case: what an ending holds is objects, not values.
        static func == (lhs: Self, rhs: Self) -> Bool {
            switch (lhs, rhs) {
            case (.configured, .configured), (.needsStoredCustomer, .needsStoredCustomer), (.needsNewCookie, .needsNewCookie): true
            default: false
            }
        }

        /// A configured outcome, whatever its ending (for comparisons).
        static var configured: Self { .configured(Ending()) }
    }

    /// A customer save not written yet: until it is, the customer in memory is the truth for that
    /// storage (<doc:Behaviour#R1>).
    struct UnsavedCustomer: Sendable {
        var pending: Int
        var latest: CustomerIds
    }

    /// A snapshot of the current customer, and when it was fetched.
    struct Answerable: Sendable {
        let segments: SegmentsByCategory
        /// On the wall clock (a snapshot another process fetched: all there is, T10).
        let fetchedAt: Date
        /// On the monotonic clock, for a fetch of this process.
        let fetchedUptime: TimeInterval?

        init?(_ state: State) {
            guard case .running(let configured) = state, let snapshot = configured.baseline.snapshot,
                snapshot.customer == configured.customer
            else { return nil }
            segments = snapshot.segments
            fetchedAt = snapshot.fetchedAt
            fetchedUptime = configured.snapshotUptime
        }
    }

    /// The reload the loading configuration owes once its baseline is in.
    struct Loaded: Sendable {
        var reloadOwed: Bool
        var otherIntegration: Bool
        var burstStarted: TimeInterval?
    }
}
