import Foundation
import Observation
import SegmentsDomain
import SegmentsData

/// The current segments of a few categories, for SwiftUI and any other observer: each category's
/// list changes on the main actor exactly when a listener of that category registered with
/// includeFirstLoad is told (<doc:Behaviour#M5>, <doc:Behaviour#D5>, <doc:Behaviour#D6>).
///
/// Reading ``segments(for:)`` in a SwiftUI view's `body` (or inside `withObservationTracking`)
/// makes the view depend on that category only: it is re-rendered each time the category's
/// listeners are told a list — the first load, even when it is `[]` or equal to the list shown, and
/// every change — and never for another category. The model listens through its client's listener
/// API, so it holds the same lists, in the same order, as any other listener of the category, and
/// it stops listening when it is released. It lives as long as the app holds it, whatever the client
/// does meanwhile: after ``SegmentsClient/stop()`` its lists read `[]`, and after the next configure
/// they follow that configuration, its first load included.
///
/// ```swift
/// struct DiscoveryView: View {
///     let model: SegmentsModel   // made once, e.g. SegmentsModel(categories: [.discovery()])
///     var body: some View {
///         List(model.segments(for: .discovery()), id: \.id) { Text($0.id) }
///     }
/// }
/// ```
///
/// Make a model once (in the app, a scene or a view's `@State`) and pass it down: each model
/// registers listeners, and a listener registered while the client is configured asks for a reload
/// (<doc:Behaviour#T1>). Build it over a client made with the fakes of `SegmentsTesting` to test what a
/// view shows without a network or real time: ``init(categories:client:)``.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
@MainActor
public final class SegmentsModel {
    /// The categories the model watches, in the order given, each once.
    public let categories: [SegmentCategory]

    /// The client whose listeners the model registered, removed from it when the model goes.
    private let client: SegmentsClient
    /// One observed list per watched category, so an observer of one category is not told about another.
    private let lists: [SegmentCategory: ObservedSegments]
    /// The model's registrations: a `let` of a `Sendable` type, so the nonisolated `deinit` can
    /// remove them.
    private let tokens: [ListenerToken]

    /// A model of `categories` over the shared integration, ``Exponea/shared``: its lists follow
    /// the shared instance's listeners (<doc:Behaviour#M5>), whether or not it is configured yet.
    public convenience init(categories: [SegmentCategory]) {
        self.init(categories: categories, client: Exponea.shared.client)
    }

    /// A model of `categories` over `exponea`'s client (<doc:Behaviour#M5>): for code that takes its
    /// ``Exponea`` as a parameter.
    public convenience init(categories: [SegmentCategory], exponea: Exponea) {
        self.init(categories: categories, client: exponea.client)
    }

    /// A model of `categories` over `client`, configured or not (<doc:Behaviour#M5>).
    ///
    /// It registers one listener with includeFirstLoad per category at once, so the first
    /// successful reload after this call — or after `client` is configured — fills every list, even
    /// when nothing changed (<doc:Behaviour#D6>). Until then each list is `[]`.
    public init(categories: [SegmentCategory], client: SegmentsClient) {
        var unique: [SegmentCategory] = []
        for category in categories where !unique.contains(category) { unique.append(category) }
        let lists = Dictionary(uniqueKeysWithValues: unique.map { ($0, ObservedSegments()) })
        self.categories = unique
        self.client = client
        self.lists = lists
        // The handlers hold each list weakly and never the model: the client keeps no model alive,
        // and a hop still queued when the model goes finds nothing to update.
        // Kept across stops: after a stop the lists read `[]`, and the next configuration fills
        // them (its first load included).
        tokens = unique.map { category in
            client.engine.addListener(
                SegmentListener(category: category, includeFirstLoad: true) { [weak list = lists[category]] segments in
                    ObservedSegments.tell(list, segments)
                },
                lifetime: .acrossStops)
        }
    }

    /// Removes the model's listeners: once released, it is told nothing more (<doc:Behaviour#M5>,
    /// <doc:Behaviour#D7>).
    deinit {
        for token in tokens { client.removeListener(token) }
    }

    /// The current list of `category`: the last list its listeners were told, `[]` before the
    /// first load and for a category the model does not watch (<doc:Behaviour#M5>).
    ///
    /// Reading it while observation is tracked (a SwiftUI `body`, `withObservationTracking`)
    /// registers a dependency on that category alone.
    public func segments(for category: SegmentCategory) -> [Segment] {
        lists[category]?.segments ?? []
    }
}

/// One category's list, observed on its own.
///
/// Written with the registrar directly rather than `@Observable`: every list a listener is told
/// is a change, even one equal to the list shown (the first load), on every toolchain — newer
/// `@Observable` expansions skip equal values.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
private final class ObservedSegments: Observable {
    private let registrar = ObservationRegistrar()
    private var storage: [Segment] = []

    /// The last list told, read as a tracked dependency.
    var segments: [Segment] {
        registrar.access(self, keyPath: \.segments)
        return storage
    }

    /// Sets the list, telling its observers; only on the main actor.
    private func set(_ segments: [Segment]) {
        registrar.withMutation(of: self, keyPath: \.segments) { storage = segments }
    }

    /// Called on the delivery queue: sets `list` on the main actor, in the order the lists come.
    ///
    /// A delivery queue that runs on the main queue (`.main`, or a queue targeting it) is already
    /// on the main actor: the list is set at once. Any other serial queue never runs there, so
    /// every list it delivers takes the same route, one `DispatchQueue.main.async` each, and the
    /// main queue keeps their order (a `Task` would not promise it).
    nonisolated static func tell(_ list: ObservedSegments?, _ segments: [Segment]) {
        MainQueue.run { [weak list] in list?.set(segments) }
    }
}
