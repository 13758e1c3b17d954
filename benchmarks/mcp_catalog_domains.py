"""The 45 tools of ``mcp_catalog_server.py`` besides the three the task needs.

Eight business domains; each entry is ``(name, description, [(parameter, type, default,
description)])`` with ``...`` for a required parameter.
"""

from __future__ import annotations

from typing import Any, Literal

DOMAINS: dict[str, list[tuple[str, str, list[tuple[str, Any, Any, str]]]]] = {
    "crm": [
        (
            "find_contacts",
            "Search contacts by name, e-mail or company.",
            [("query", str, ..., "Free text."), ("limit", int, 20, "At most this many.")],
        ),
        (
            "get_account",
            "One customer account with owner and segment.",
            [("account_id", str, ..., "Account id, e.g. ACC-1001.")],
        ),
        (
            "list_opportunities",
            "Open sales opportunities, optionally by stage.",
            [
                (
                    "stage",
                    Literal["lead", "qualified", "proposal", "won", "lost"] | None,
                    None,
                    "Pipeline stage.",
                ),
                ("owner", str | None, None, "Sales rep login."),
            ],
        ),
        (
            "log_activity",
            "Record a call, meeting or e-mail on an account.",
            [
                ("account_id", str, ..., "Account id."),
                ("kind", Literal["call", "meeting", "email"], ..., "Activity type."),
                ("notes", str, "", "Free text."),
            ],
        ),
        (
            "update_opportunity",
            "Change the stage or amount of an opportunity.",
            [
                ("opportunity_id", str, ..., "Opportunity id."),
                ("stage", str | None, None, "New stage."),
                ("amount_eur", float | None, None, "New amount."),
            ],
        ),
        (
            "merge_contacts",
            "Merge a duplicate contact into another.",
            [
                ("keep_id", str, ..., "Contact to keep."),
                ("duplicate_id", str, ..., "Contact to fold in."),
            ],
        ),
    ],
    "billing": [
        (
            "list_invoices",
            "Invoices of an account, newest first.",
            [
                ("account_id", str, ..., "Account id."),
                (
                    "status",
                    Literal["draft", "sent", "paid", "overdue"] | None,
                    None,
                    "Only this status.",
                ),
            ],
        ),
        (
            "get_invoice",
            "One invoice with its lines.",
            [("invoice_id", str, ..., "Invoice id, e.g. INV-2025-0042.")],
        ),
        (
            "create_credit_note",
            "Credit part of an invoice.",
            [
                ("invoice_id", str, ..., "Invoice id."),
                ("amount_eur", float, ..., "Amount to credit."),
                ("reason", str, ..., "Why."),
            ],
        ),
        (
            "list_payments",
            "Payments received in a date range.",
            [
                ("start", str, ..., "ISO date."),
                ("end", str, ..., "ISO date."),
                ("method", Literal["card", "sepa", "wire"] | None, None, "Payment method."),
            ],
        ),
        (
            "get_tax_rate",
            "VAT rate for a country and product class.",
            [
                ("country", str, ..., "ISO 3166 code."),
                ("product_class", str, "standard", "Tax class."),
            ],
        ),
        (
            "send_reminder",
            "E-mail a payment reminder for an overdue invoice.",
            [
                ("invoice_id", str, ..., "Invoice id."),
                ("template", str, "polite", "Reminder template."),
            ],
        ),
    ],
    "inventory": [
        (
            "get_item",
            "Catalog data of one SKU (name, weight, dimensions).",
            [("sku", str, ..., "The SKU.")],
        ),
        (
            "move_stock",
            "Move units between bins of one warehouse.",
            [
                ("warehouse", str, ..., "Warehouse code."),
                ("sku", str, ..., "The SKU."),
                ("from_bin", str, ..., "Source bin."),
                ("to_bin", str, ..., "Target bin."),
                ("units", int, ..., "Units to move."),
            ],
        ),
        (
            "record_count",
            "Record a cycle count for a SKU.",
            [
                ("warehouse", str, ..., "Warehouse code."),
                ("sku", str, ..., "The SKU."),
                ("counted", int, ..., "Units counted."),
            ],
        ),
    ],
    "purchasing": [
        (
            "create_purchase_order",
            "Order units of a SKU from a supplier.",
            [
                ("supplier_id", str, ..., "Supplier id."),
                ("sku", str, ..., "The SKU."),
                ("units", int, ..., "Units."),
                ("deliver_to", str, ..., "Warehouse code."),
            ],
        ),
        (
            "list_purchase_orders",
            "Purchase orders, optionally open ones only.",
            [
                ("open_only", bool, True, "Skip received orders."),
                ("supplier_id", str | None, None, "One supplier."),
            ],
        ),
        (
            "get_supplier",
            "Supplier master data and rating.",
            [("supplier_id", str, ..., "Supplier id.")],
        ),
        (
            "cancel_purchase_order",
            "Cancel an open purchase order.",
            [("po_id", str, ..., "Purchase order id."), ("reason", str, ..., "Why.")],
        ),
        (
            "list_suppliers",
            "Suppliers of a product category.",
            [("category", str | None, None, "Category.")],
        ),
        (
            "get_price_history",
            "Past purchase prices of a SKU.",
            [("sku", str, ..., "The SKU."), ("months", int, 12, "How far back.")],
        ),
    ],
    "hr": [
        ("find_employee", "Search employees by name or team.", [("query", str, ..., "Free text.")]),
        ("get_employee", "One employee's profile.", [("employee_id", str, ..., "Employee id.")]),
        (
            "list_time_off",
            "Approved and pending time off in a date range.",
            [
                ("start", str, ..., "ISO date."),
                ("end", str, ..., "ISO date."),
                ("team", str | None, None, "One team."),
            ],
        ),
        (
            "request_time_off",
            "File a time-off request.",
            [
                ("employee_id", str, ..., "Employee id."),
                ("start", str, ..., "ISO date."),
                ("end", str, ..., "ISO date."),
                ("kind", Literal["vacation", "sick", "unpaid"], "vacation", "Kind."),
            ],
        ),
        (
            "list_open_positions",
            "Open job positions.",
            [("department", str | None, None, "Department.")],
        ),
        (
            "get_org_chart",
            "Reports of a manager, recursively.",
            [("manager_id", str, ..., "Employee id."), ("depth", int, 2, "Levels.")],
        ),
    ],
    "support": [
        (
            "list_tickets",
            "Support tickets, filtered.",
            [
                ("status", Literal["open", "pending", "solved"] | None, None, "Status."),
                ("priority", Literal["low", "normal", "high", "urgent"] | None, None, "Priority."),
                ("account_id", str | None, None, "Account."),
            ],
        ),
        (
            "get_ticket",
            "One ticket with its conversation.",
            [("ticket_id", str, ..., "Ticket id.")],
        ),
        (
            "reply_ticket",
            "Post a public reply on a ticket.",
            [("ticket_id", str, ..., "Ticket id."), ("body", str, ..., "Reply text.")],
        ),
        (
            "assign_ticket",
            "Assign a ticket to an agent or group.",
            [
                ("ticket_id", str, ..., "Ticket id."),
                ("assignee", str, ..., "Agent login or group."),
            ],
        ),
        (
            "search_knowledge_base",
            "Search help-center articles.",
            [("query", str, ..., "Free text."), ("locale", str, "en", "Article language.")],
        ),
        (
            "get_sla_breaches",
            "Tickets that breached their SLA in a period.",
            [("start", str, ..., "ISO date."), ("end", str, ..., "ISO date.")],
        ),
    ],
    "shipping": [
        (
            "create_shipment",
            "Book a parcel shipment.",
            [
                ("order_id", str, ..., "Order id."),
                ("carrier", Literal["dhl", "ups", "dpd"], ..., "Carrier."),
                ("weight_kg", float, ..., "Weight."),
            ],
        ),
        (
            "track_shipment",
            "Tracking events of a shipment.",
            [("tracking_number", str, ..., "Carrier tracking number.")],
        ),
        (
            "get_shipping_rates",
            "Rates of every carrier for a parcel.",
            [
                ("from_country", str, ..., "ISO code."),
                ("to_country", str, ..., "ISO code."),
                ("weight_kg", float, ..., "Weight."),
            ],
        ),
        (
            "list_returns",
            "Customer returns in a period.",
            [
                ("start", str, ..., "ISO date."),
                ("end", str, ..., "ISO date."),
                ("reason", str | None, None, "Return reason."),
            ],
        ),
        (
            "cancel_shipment",
            "Cancel a booked shipment before pickup.",
            [("shipment_id", str, ..., "Shipment id.")],
        ),
        (
            "validate_address",
            "Check and normalise a postal address.",
            [
                ("street", str, ..., "Street and number."),
                ("city", str, ..., "City."),
                ("postal_code", str, ..., "Postal code."),
                ("country", str, ..., "ISO code."),
            ],
        ),
    ],
    "marketing": [
        (
            "list_campaigns",
            "Marketing campaigns and their status.",
            [("status", Literal["draft", "running", "ended"] | None, None, "Status.")],
        ),
        (
            "get_campaign_metrics",
            "Impressions, clicks, conversions and spend of a campaign.",
            [
                ("campaign_id", str, ..., "Campaign id."),
                ("granularity", Literal["day", "week", "total"], "total", "Bucket size."),
            ],
        ),
        (
            "create_segment",
            "Create an audience segment from a filter.",
            [("name", str, ..., "Segment name."), ("filter", str, ..., "Filter expression.")],
        ),
        (
            "schedule_email",
            "Schedule an e-mail blast to a segment.",
            [
                ("segment_id", str, ..., "Segment id."),
                ("template_id", str, ..., "Template id."),
                ("send_at", str, ..., "ISO datetime."),
            ],
        ),
        ("list_templates", "E-mail templates.", [("locale", str | None, None, "Language.")]),
        (
            "get_unsubscribes",
            "Unsubscribes in a period, by reason.",
            [("start", str, ..., "ISO date."), ("end", str, ..., "ISO date.")],
        ),
    ],
}
