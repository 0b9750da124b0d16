//! The service's operations (spec section 4), each declared once: the interface that serves
//! it, its method, its path, whether sending it twice acts as once, and its types: the
//! request a call carries (under the spec's names, with the Python argument that carries each
//! field the client names otherwise) and the response its answer is read into. The client's
//! requests, the emulator's routes, its fault matching and gate, the OpenAPI document's paths
//! and the bindings' entries all read them from here, so a path of the service is written in
//! this file alone, and an operation's client function, its binding and its document take
//! and give the types declared here.

use serde_json::{Map, Value};

use crate::model::{
    CampaignQuery, DistributionQuery, Drip, ListQuery, NewDrip, NewNotification, Page,
    ProductUpdate, ProfileMembership, Segment, SegmentDeletion, SegmentHashes, SegmentsQuery,
    SummaryQuery, SummaryRead, TriggeredCampaign,
};

/// The two interfaces of the service, each on its own root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interface {
    /// `{base_url}/apiv1`
    Main,
    /// `{events_url}/api/v1`
    Events,
}

impl Interface {
    /// As the request log and `client.request(interface=...)` name it.
    pub const fn name(self) -> &'static str {
        match self {
            Interface::Main => "main",
            Interface::Events => "events",
        }
    }

    /// The path every operation of the interface starts with.
    pub const fn prefix(self) -> &'static str {
        match self {
            Interface::Main => "/apiv1",
            Interface::Events => "/api/v1",
        }
    }
}

/// One operation of the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    /// As the client names it (`drips.create`); one path and method may serve two of the
    /// client's methods (`segments.add_profiles` and `remove_profiles` post the same form).
    pub name: &'static str,
    /// Its section of the spec.
    pub section: &'static str,
    pub interface: Interface,
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The path the service serves, its parameter as `{name}` (one segment).
    pub path: &'static str,
    /// What sending its request twice does, and so whether it is resent and takes an
    /// idempotency key.
    pub repeat: Repeat,
    /// Whether the same request sent twice acts as once ([`Repeat::Safe`]), so that it may
    /// be sent again whenever its outcome is unknown.
    pub idempotent: bool,
    /// Each field of the spec's request (`from`) that the Python method takes under another
    /// name (`start`), as an error names it to the caller; a field not listed keeps its name.
    /// The request type's ([`PythonFields`]).
    pub python_names: PythonNames,
}

/// What sending an operation's request twice does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// Acts as once: the reads, and the membership writes (a member added twice is one
    /// membership). Sent again whenever its outcome is unknown.
    Safe,
    /// Acts twice: a broadcast, a drip, an event or a product update sent twice is two. Never
    /// resent once it may have been received, and it takes an idempotency key, so that the
    /// caller's own re-runs send it once per key.
    Keyed,
    /// Cannot act twice, but answers a second sending with a failure (a deleted segment's
    /// delete answers "does not exist"): not resent, which would report a success as a
    /// failure, and no key, since a re-run learns from that answer what happened.
    Once,
}

/// Pairs of a spec field's name and the Python argument's.
pub type PythonNames = &'static [(&'static str, &'static str)];

/// `field` (a spec name, or a path such as `subscriber_hash[3]` or `from`) as the Python
/// argument that carries it: its first part renamed by `names`, the rest as it is.
pub fn python_name(names: PythonNames, field: &str) -> String {
    for (spec, python) in names {
        if let Some(rest) = field.strip_prefix(spec) {
            if rest.is_empty() || rest.starts_with('[') || rest.starts_with('.') {
                return format!("{python}{rest}");
            }
        }
    }
    field.to_string()
}

impl Operation {
    /// Whether a call of it takes an idempotency key ([`Repeat::Keyed`]).
    pub const fn takes_key(&self) -> bool {
        matches!(self.repeat, Repeat::Keyed)
    }

    /// Its method as HTTP names it, for the client's request and the emulator's route.
    pub fn http_method(&self) -> reqwest::Method {
        reqwest::Method::from_bytes(self.method.as_bytes()).expect("a declared HTTP method")
    }

    /// The path after the interface's root (`/drips/{drip_id}`), as the client appends it to
    /// its configured root.
    pub fn on_root(&self) -> &'static str {
        &self.path[self.interface.prefix().len()..]
    }

    /// [`Operation::on_root`] with its one parameter given (`/drips/7`).
    pub fn on_root_with(&self, value: impl std::fmt::Display) -> String {
        let path = self.on_root();
        match (path.find('{'), path.find('}')) {
            (Some(open), Some(close)) => format!("{}{value}{}", &path[..open], &path[close + 1..]),
            _ => path.to_string(),
        }
    }
}

/// An operation's types: what a call of it carries and what its answer is read into. Each
/// operation has one, named after it (`DripsGet` for [`DRIPS_GET`]): the client's function
/// takes its [`Request`] and gives its [`Response`] (`client::drips::get`), the binding
/// makes the request of the Python arguments, and the OpenAPI document describes both.
pub trait Declared {
    const OPERATION: &'static Operation;
    /// Its fields under the spec's names; [`PythonFields`] names them as the Python method does.
    type Request: PythonFields;
    type Response;
}

/// The request of the operation `O`.
pub type Request<O> = <O as Declared>::Request;
/// The response of the operation `O`.
pub type Response<O> = <O as Declared>::Response;

/// A request's fields that the Python method takes under other names (`from` is `start`).
pub trait PythonFields {
    const PYTHON_NAMES: PythonNames = &[];
}

/// Declares each operation as a constant and its types, one line each: its constant's name,
/// its types' (request => response), then its name, section, interface, method and path,
/// and what sending it twice does ([`Repeat`]).
macro_rules! operations {
    ($($constant:ident: $typed:ident($request:ty => $response:ty) = $name:literal $section:literal $iface:ident $method:literal $path:literal $repeat:ident;)*) => {
        $(
            #[doc = concat!("`", $method, " ", $path, "` (", $section, "), `", $name, "`.")]
            pub const $constant: Operation = Operation {
                name: $name,
                section: $section,
                interface: Interface::$iface,
                method: $method,
                path: $path,
                repeat: Repeat::$repeat,
                idempotent: matches!(Repeat::$repeat, Repeat::Safe),
                python_names: <$request as PythonFields>::PYTHON_NAMES,
            };

            #[doc = concat!("The types of `", $name, "` ([`", stringify!($constant), "`]).")]
            pub enum $typed {}

            impl Declared for $typed {
                const OPERATION: &'static Operation = &$constant;
                type Request = $request;
                type Response = $response;
            }
        )*

        /// Every operation, in the order declared (the spec's).
        pub const ALL: &[&Operation] = &[$(&$constant),*];
    };
}

// The Python names of the fields the spec names otherwise, by request.
impl PythonFields for SegmentHashes {
    const PYTHON_NAMES: PythonNames = &[("subscriber_hash", "subscriber_hashes")];
}
impl PythonFields for ProfileMembership {
    const PYTHON_NAMES: PythonNames = &[("profile_id", "profile_ids")];
}
impl PythonFields for SummaryQuery {
    const PYTHON_NAMES: PythonNames = &[("from", "start"), ("to", "end")];
}
impl PythonFields for DistributionQuery {
    const PYTHON_NAMES: PythonNames = &[("type", "types")];
}
/// A broadcast's form fields as the arguments and `Action` attributes that carry them (its
/// two buttons are slots 1 and 2 of the form, `actions[0]` and `actions[1]`).
impl PythonFields for NewNotification {
    const PYTHON_NAMES: PythonNames = &[
        ("notification_title", "title"),
        ("notification_message", "message"),
        ("notification_url", "url"),
        ("notification_type", "type"),
        ("notification_expiry", "expiry"),
        ("multi_element_title1", "actions[0].label"),
        ("multi_element_url1", "actions[0].url"),
        ("multi_element_image1", "actions[0].image_url"),
        ("multi_element_title2", "actions[1].label"),
        ("multi_element_url2", "actions[1].url"),
        ("multi_element_image2", "actions[1].image_url"),
    ];
}
// The requests whose fields keep their names.
impl PythonFields for CampaignQuery {}
impl PythonFields for ListQuery {}
impl PythonFields for NewDrip {}
impl PythonFields for SegmentsQuery {}
impl PythonFields for SegmentDeletion {}
impl PythonFields for ProductUpdate {}
impl PythonFields for Map<String, Value> {}

operations! {
    TRIGGERS_GET: TriggersGet(CampaignQuery => TriggeredCampaign) = "triggers.get" "4.1" Main "GET" "/apiv1/triggers/{trigger_id}" Safe;
    TRIGGERS_LIST: TriggersList(ListQuery => Page<TriggeredCampaign>) = "triggers.list" "4.2" Main "GET" "/apiv1/triggers" Safe;
    DRIPS_CREATE: DripsCreate(NewDrip => i64) = "drips.create" "4.3" Main "POST" "/apiv1/drips" Keyed;
    DRIPS_LIST: DripsList(ListQuery => Page<Drip>) = "drips.list" "4.4" Main "GET" "/apiv1/drips" Safe;
    DRIPS_GET: DripsGet(CampaignQuery => Drip) = "drips.get" "4.5" Main "GET" "/apiv1/drips/{drip_id}" Safe;
    SEGMENTS_ADD_SUBSCRIBERS: SegmentsAddSubscribers(SegmentHashes => String) = "segments.add_subscribers" "4.6" Main "POST" "/apiv1/segments/addSegmentWithHash" Safe;
    SEGMENTS_DELETE: SegmentsDelete(SegmentDeletion => String) = "segments.delete" "4.7" Main "POST" "/apiv1/segments/delete" Once;
    SEGMENTS_PROFILES: SegmentsProfiles(ProfileMembership => ()) = "segments.add_profiles" "4.8" Main "POST" "/apiv1/profile" Safe;
    SEGMENTS_LIST: SegmentsList(SegmentsQuery => Vec<Segment>) = "segments.list" "4.9" Main "GET" "/apiv1/segments" Safe;
    ANALYTICS_SUMMARY: AnalyticsSummary(SummaryQuery => Vec<SummaryRead>) = "analytics.summary" "4.10" Main "GET" "/apiv1/analytics/summary" Safe;
    ANALYTICS_SUBSCRIBERS: AnalyticsSubscribers(DistributionQuery => Map<String, Value>) = "analytics.subscribers" "4.11" Main "GET" "/apiv1/subscribers/analytics/summary" Safe;
    PRODUCTS_UPDATE: ProductsUpdate(ProductUpdate => ()) = "products.update" "4.12" Main "POST" "/apiv1/products" Keyed;
    NOTIFICATIONS_CREATE: NotificationsCreate(NewNotification => i64) = "notifications.create" "4.13" Main "POST" "/apiv1/notifications" Keyed;
    EVENTS_TRACK: EventsTrack(Map<String, Value> => ()) = "events.track" "4.14" Events "POST" "/api/v1/events" Keyed;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_is_on_its_interface_and_each_pair_of_method_and_path_is_one_operation() {
        for op in ALL {
            assert!(op.path.starts_with(op.interface.prefix()), "{}", op.name);
            assert!(op.on_root().starts_with('/'), "{}", op.name);
            let same = ALL
                .iter()
                .filter(|o| o.method == op.method && o.path == op.path)
                .count();
            assert_eq!(same, 1, "{} {}", op.method, op.path);
            assert!(
                ["GET", "POST"].contains(&op.http_method().as_str()),
                "{}",
                op.name
            );
        }
        assert_eq!(DRIPS_GET.on_root_with(7), "/drips/7");
        assert_eq!(DRIPS_LIST.on_root_with(7), "/drips");
    }

    #[test]
    fn a_field_is_named_as_the_python_argument_that_carries_it() {
        let named = |op: &Operation, f: &str| python_name(op.python_names, f);
        assert_eq!(named(&ANALYTICS_SUMMARY, "from"), "start");
        assert_eq!(named(&ANALYTICS_SUMMARY, "to"), "end");
        assert_eq!(
            named(&SEGMENTS_ADD_SUBSCRIBERS, "subscriber_hash[3]"),
            "subscriber_hashes[3]"
        );
        assert_eq!(named(&NOTIFICATIONS_CREATE, "notification_title"), "title");
        assert_eq!(
            named(&NOTIFICATIONS_CREATE, "multi_element_url2"),
            "actions[1].url"
        );
        // a longer word is another field; a field not listed keeps its name
        assert_eq!(named(&ANALYTICS_SUBSCRIBERS, "types"), "types");
        assert_eq!(
            named(&DRIPS_CREATE, "send_to.include_segments[0]"),
            "send_to.include_segments[0]"
        );
        // each button slot the service takes has its three fields named
        for slot in 1..=crate::validate::ACTIONS_MAX {
            for part in ["title", "url", "image"] {
                let field = format!("multi_element_{part}{slot}");
                assert!(
                    named(&NOTIFICATIONS_CREATE, &field).starts_with("actions["),
                    "{field}"
                );
            }
        }
    }
}
