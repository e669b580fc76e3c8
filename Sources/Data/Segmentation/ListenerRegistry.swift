import Foundation
import SegmentsDomain

/// The identity of one listener registration, returned by registration and used to remove it.
public struct ListenerToken: Hashable, Sendable {
    let rawValue: Int
}

/// A listener of one category (<doc:Behaviour#M4>): whether it wants the first load, and its handler.
package struct SegmentListener: Sendable {
    /// The category listened to.
    package var category: SegmentCategory
    /// Whether the listener is told the current list once, even when nothing changed
    /// (<doc:Behaviour#D6>).
    package var includeFirstLoad: Bool
    /// Called on the delivery queue with the category's full current list.
    package var handler: @Sendable ([Segment]) -> Void

    /// Creates a listener.
    package init(
        category: SegmentCategory, includeFirstLoad: Bool, handler: @escaping @Sendable ([Segment]) -> Void
    ) {
        self.category = category
        self.includeFirstLoad = includeFirstLoad
        self.handler = handler
    }
}

/// How long a registration lasts besides its removal and its owner (<doc:Behaviour#M5>,
/// <doc:Behaviour#A3>).
package enum ListenerLifetime: Sendable {
    /// Until it is removed or the client stops: an app's listener.
    case untilStop
    /// Across stops: at a stop it is told `[]` (when it was told segments) and its first-load
    /// promise is renewed, so it follows the next configuration (a `SegmentsModel`, M5 rev 4).
    case acrossStops
    /// Until it is removed or the client stops, when `end` is called (once, after the lock): a
    /// `changes(of:)` stream, whose iteration then finishes.
    case stream(end: @Sendable () -> Void)
}

/// A weak reference to the object a listener is tied to. Only read and cleared atomically by the
/// Swift runtime, which makes it safe to share.
final class WeakOwner: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// Owners a prune found alive, held until the lock is released (<doc:Behaviour#D7>): never read,
/// only let go of, which is why sharing it is safe.
struct OwnersSeenAlive: @unchecked Sendable {
    let objects: [AnyObject]
}

/// Lets a listener's handler start only while its registration lasts (<doc:Behaviour#D7>).
///
/// Closing never waits: it flips a flag and returns, so removing a listener, stopping or
/// re-configuring cannot block on a running handler. Once ``close()`` has returned, ``run(_:)``
/// starts no new call; a call that started before may finish. No lock is held while the handler
/// runs, so a handler may remove its own listener or call the SDK.
final class ListenerGate: Sendable {
    private let isOpen = Locked(true)

    /// Runs `body` if the gate is still open. The flag is read under the lock, the body runs
    /// after it is released.
    func run(_ body: () -> Void) {
        guard isOpen.value else { return }
        body()
    }

    /// Closes the gate at once; returns without waiting for a running body.
    func close() {
        isOpen.withLock { $0 = false }
    }
}

/// One handler call the delivery queue makes: the registration's gate and owner are checked when
/// it runs, not when it was decided (<doc:Behaviour#D7>).
struct Delivery: Sendable {
    let gate: ListenerGate
    let owner: WeakOwner?
    let handler: @Sendable ([Segment]) -> Void
    let segments: [Segment]

    /// Calls the handler unless the registration ended or its owner is gone.
    func run() {
        gate.run {
            if owner == nil || owner?.object != nil { handler(segments) }
        }
    }
}

/// The registered listeners, indexed by category in registration order, each with what it was
/// last delivered (<doc:Behaviour#M4>, <doc:Behaviour#D4>–<doc:Behaviour#D7>).
///
/// Adding and removing are O(1) (amortized: a category's list drops removed tokens once they are
/// half of it); telling a category touches only that category's listeners, so one change reaches
/// 10,000 listeners without sorting or filtering every registration.
struct ListenerRegistry: Sendable {
    struct Registration: Sendable {
        let token: ListenerToken
        let listener: SegmentListener
        /// Groups the registrations of one value so removing the value removes all of them.
        let group: UUID?
        let owner: WeakOwner?
        let lifetime: ListenerLifetime
        /// Closed when the registration ends; deliveries run through it.
        let gate = ListenerGate()

        func delivery(of segments: [Segment]) -> Delivery {
            Delivery(gate: gate, owner: owner, handler: listener.handler, segments: segments)
        }
    }

    /// One category's registrations in registration order, with the list each was last delivered
    /// (`nil`: nothing yet, <doc:Behaviour#D4>); removed ones stay until they are half of the list.
    private struct CategoryIndex: Sendable {
        var tokens: [Int] = []
        var lastDelivered: [[Segment]?] = []
        var removed = 0
        var live: Int { tokens.count - removed }
    }

    private var byToken: [Int: Registration] = [:]
    private var byCategory: [SegmentCategory: CategoryIndex] = [:]
    private var tokensByGroup: [UUID: Set<Int>] = [:]
    /// Registrations whose first-load promise (<doc:Behaviour#D6>) is still to be kept.
    private(set) var awaitingFirstLoad: Set<Int> = []
    /// How many registrations were made with includeFirstLoad (kept promises too, <doc:Behaviour#T2>).
    private var includingFirstLoad = 0
    /// The registrations tied to an owner: the only ones that can end by themselves, so pruning
    /// and liveness checks cost nothing when no listener has an owner.
    private var ownedTokens: Set<Int> = []
    private var nextToken = 0

    init() {}

    mutating func add(
        _ listener: SegmentListener, group: UUID?, owner: AnyObject?, lifetime: ListenerLifetime = .untilStop
    ) -> ListenerToken {
        let token = ListenerToken(rawValue: nextToken)
        nextToken += 1
        byToken[token.rawValue] = Registration(
            token: token, listener: listener, group: group, owner: owner.map(WeakOwner.init), lifetime: lifetime)
        byCategory[listener.category, default: CategoryIndex()].tokens.append(token.rawValue)
        byCategory[listener.category]?.lastDelivered.append(nil)
        if let group { tokensByGroup[group, default: []].insert(token.rawValue) }
        if owner != nil { ownedTokens.insert(token.rawValue) }
        if listener.includeFirstLoad {
            awaitingFirstLoad.insert(token.rawValue)
            includingFirstLoad += 1
        }
        return token
    }

    /// Removes a registration and closes its gate; returns it, for the caller to let go of
    /// outside any lock (its handler is the app's, <doc:Behaviour#D7>).
    mutating func remove(_ token: ListenerToken) -> Registration? {
        guard let registration = byToken.removeValue(forKey: token.rawValue) else { return nil }
        registration.gate.close()
        ownedTokens.remove(token.rawValue)
        awaitingFirstLoad.remove(token.rawValue)
        if registration.listener.includeFirstLoad { includingFirstLoad -= 1 }
        if let group = registration.group {
            tokensByGroup[group]?.remove(token.rawValue)
            if tokensByGroup[group]?.isEmpty == true { tokensByGroup[group] = nil }
        }
        let category = registration.listener.category
        guard var index = byCategory.removeValue(forKey: category) else { return registration }
        guard index.live > 1 else { return registration }  // its last listener: what it was delivered goes too
        index.removed += 1
        if index.removed * 2 >= index.tokens.count {
            var tokens: [Int] = []
            var lastDelivered: [[Segment]?] = []
            for (position, token) in index.tokens.enumerated() where byToken[token] != nil {
                tokens.append(token)
                lastDelivered.append(index.lastDelivered[position])
            }
            index = CategoryIndex(tokens: tokens, lastDelivered: lastDelivered, removed: 0)
        }
        byCategory[category] = index
        return registration
    }

    /// Removes every registration of `group`; returns them.
    mutating func removeGroup(_ group: UUID) -> [Registration] {
        (tokensByGroup[group] ?? []).sorted().compactMap { remove(ListenerToken(rawValue: $0)) }
    }

    /// What a stop did to the registry (<doc:Behaviour#A3>, <doc:Behaviour#M5>).
    struct Stopped: Sendable {
        /// The registrations removed, to let go of after the lock.
        var removed: [Registration] = []
        /// The ends of the streams removed, to call after the lock.
        var streamEnds: [@Sendable () -> Void] = []
        /// `[]` for the registrations kept across the stop that were told segments.
        var deliveries: [Delivery] = []
    }

    /// Stops: removes every registration but those kept across stops and closes their gates; a
    /// kept one that was told segments is told `[]`, and every kept one made with includeFirstLoad
    /// awaits its first load again, from the next configuration.
    mutating func stop() -> Stopped {
        var stopped = Stopped()
        for token in byToken.keys.sorted() {
            guard let registration = byToken[token] else { continue }
            switch registration.lifetime {
            case .acrossStops:
                continue
            case .untilStop:
                break
            case .stream(let end):
                stopped.streamEnds.append(end)
            }
            if let removed = remove(registration.token) { stopped.removed.append(removed) }
        }
        for category in Array(byCategory.keys) {
            guard var index = byCategory.removeValue(forKey: category) else { continue }
            for position in index.tokens.indices {
                guard let registration = byToken[index.tokens[position]] else { continue }
                if let told = index.lastDelivered[position], !told.isEmpty {
                    stopped.deliveries.append(registration.delivery(of: []))
                }
                index.lastDelivered[position] = nil
                if registration.listener.includeFirstLoad { awaitingFirstLoad.insert(registration.token.rawValue) }
            }
            byCategory[category] = index
        }
        return stopped
    }

    /// Drops registrations whose owner is gone and returns them; the owners found alive go into
    /// `alive`, for the caller to let go of after its lock.
    mutating func pruneReleasedOwners(keepingAlive alive: inout [AnyObject]) -> [Registration] {
        guard !ownedTokens.isEmpty else { return [] }
        var dead: [Int] = []
        for token in ownedTokens {
            if let object = byToken[token]?.owner?.object { alive.append(object) } else { dead.append(token) }
        }
        return dead.sorted().compactMap { remove(ListenerToken(rawValue: $0)) }
    }

    /// Whether nothing is registered; a registration whose owner went counts until it is pruned
    /// (looking at its owner here could end the owner's life under a lock).
    var isEmpty: Bool { byToken.isEmpty }
    /// How many registrations there are, pruned ones excepted.
    var count: Int { byToken.count }
    /// The owners of the registrations tied to one.
    var owners: [WeakOwner] { ownedTokens.compactMap { byToken[$0]?.owner } }
    /// Whether a listener registered with includeFirstLoad, kept or not (<doc:Behaviour#T2>).
    var anyIncludesFirstLoad: Bool { includingFirstLoad > 0 }
    /// The categories that have listeners.
    var categories: [SegmentCategory] { Array(byCategory.keys) }
    /// How many groups have registrations: the group bookkeeping shrinks as its members go.
    var groupCount: Int { tokensByGroup.count }

    /// Appends the calls that tell `segments` to the listeners of `category` in registration
    /// order (<doc:Behaviour#D4>–<doc:Behaviour#D6>): every one when the category `changed`;
    /// otherwise those whose last delivered list differs (as a set) and, with `firstLoad`, those
    /// awaiting their first load. Each one told remembers `segments`.
    mutating func tell(
        _ segments: [Segment], to category: SegmentCategory, changed: Bool, firstLoad: Bool,
        into deliveries: inout [Delivery]
    ) {
        guard var index = byCategory.removeValue(forKey: category) else { return }
        defer { byCategory[category] = index }
        let checkFirstLoad = firstLoad && !awaitingFirstLoad.isEmpty
        // Listeners told together share one array: compare each distinct one once.
        var lastCompared: [Segment]?
        var lastDiffers = false
        for position in index.tokens.indices {
            guard let registration = byToken[index.tokens[position]] else { continue }
            var tellIt = changed || (checkFirstLoad && awaitingFirstLoad.contains(registration.token.rawValue))
            if !tellIt, let delivered = index.lastDelivered[position] {
                if lastCompared == nil || delivered != lastCompared! {
                    lastCompared = delivered
                    lastDiffers = !SegmentDiff.sameSegments(delivered, segments)
                }
                tellIt = lastDiffers
            }
            guard tellIt else { continue }
            deliveries.append(registration.delivery(of: segments))
            index.lastDelivered[position] = segments
        }
    }

    /// A successful reload kept every pending first-load promise (<doc:Behaviour#D6>).
    mutating func keepFirstLoadPromises() {
        awaitingFirstLoad = []
    }
}
