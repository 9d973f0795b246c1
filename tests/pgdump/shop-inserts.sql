--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: orders; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.orders (
    id bigint NOT NULL,
    customer_id integer NOT NULL,
    total numeric(10,2),
    placed date NOT NULL,
    note text,
    weight double precision,
    payload bytea,
    CONSTRAINT orders_total_check CHECK ((total >= (0)::numeric))
);


ALTER TABLE public.orders OWNER TO postgres;

--
-- Name: big_orders; Type: VIEW; Schema: public; Owner: postgres
--

CREATE VIEW public.big_orders AS
 SELECT orders.id,
    orders.customer_id,
    orders.total
   FROM public.orders
  WHERE (orders.total > (100)::numeric);


ALTER TABLE public.big_orders OWNER TO postgres;

--
-- Name: customers; Type: TABLE; Schema: public; Owner: app_owner
--

CREATE TABLE public.customers (
    id integer NOT NULL,
    email character varying(100) NOT NULL,
    name text NOT NULL,
    vip boolean DEFAULT false,
    created timestamp without time zone DEFAULT '2024-01-01 00:00:00'::timestamp without time zone
);


ALTER TABLE public.customers OWNER TO app_owner;

--
-- Name: customers_id_seq; Type: SEQUENCE; Schema: public; Owner: app_owner
--

CREATE SEQUENCE public.customers_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE public.customers_id_seq OWNER TO app_owner;

--
-- Name: customers_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: app_owner
--

ALTER SEQUENCE public.customers_id_seq OWNED BY public.customers.id;


--
-- Name: events; Type: TABLE; Schema: public; Owner: postgres
--

CREATE TABLE public.events (
    at timestamp with time zone NOT NULL,
    kind smallint,
    tag uuid,
    body json
);


ALTER TABLE public.events OWNER TO postgres;

--
-- Name: invoice_no; Type: SEQUENCE; Schema: public; Owner: postgres
--

CREATE SEQUENCE public.invoice_no
    START WITH 1000
    INCREMENT BY 10
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE public.invoice_no OWNER TO postgres;

--
-- Name: orders_id_seq; Type: SEQUENCE; Schema: public; Owner: postgres
--

CREATE SEQUENCE public.orders_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


ALTER TABLE public.orders_id_seq OWNER TO postgres;

--
-- Name: orders_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: postgres
--

ALTER SEQUENCE public.orders_id_seq OWNED BY public.orders.id;


--
-- Name: customers id; Type: DEFAULT; Schema: public; Owner: app_owner
--

ALTER TABLE ONLY public.customers ALTER COLUMN id SET DEFAULT nextval('public.customers_id_seq'::regclass);


--
-- Name: orders id; Type: DEFAULT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.orders ALTER COLUMN id SET DEFAULT nextval('public.orders_id_seq'::regclass);


--
-- Data for Name: customers; Type: TABLE DATA; Schema: public; Owner: app_owner
--

INSERT INTO public.customers VALUES (1, 'ann@example.com', 'Ann', true, '2024-01-01 00:00:00');
INSERT INTO public.customers VALUES (2, 'bob@example.com', 'Bob O''Neil', false, '2024-01-01 00:00:00');
INSERT INTO public.customers VALUES (3, 'cy@example.com', 'Cy', NULL, '2024-01-01 00:00:00');


--
-- Data for Name: events; Type: TABLE DATA; Schema: public; Owner: postgres
--

INSERT INTO public.events VALUES ('2024-01-01 10:00:00+00', 1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"k": [1, 2]}');
INSERT INTO public.events VALUES ('2024-01-02 11:30:00+00', 2, NULL, NULL);


--
-- Data for Name: orders; Type: TABLE DATA; Schema: public; Owner: postgres
--

INSERT INTO public.orders VALUES (1, 1, 150.50, '2024-02-01', 'first', 1.5, '\xdeadbeef');
INSERT INTO public.orders VALUES (2, 1, 20.00, '2024-02-02', NULL, NULL, NULL);
INSERT INTO public.orders VALUES (3, 2, 999.99, '2024-03-01', 'tab	and
newline', 2.25, '\x');
INSERT INTO public.orders VALUES (4, 3, 0.00, '2024-03-05', 'zero', -0.5, '\x00');


--
-- Name: customers_id_seq; Type: SEQUENCE SET; Schema: public; Owner: app_owner
--

SELECT pg_catalog.setval('public.customers_id_seq', 3, true);


--
-- Name: invoice_no; Type: SEQUENCE SET; Schema: public; Owner: postgres
--

SELECT pg_catalog.setval('public.invoice_no', 1010, true);


--
-- Name: orders_id_seq; Type: SEQUENCE SET; Schema: public; Owner: postgres
--

SELECT pg_catalog.setval('public.orders_id_seq', 4, true);


--
-- Name: customers customers_email_key; Type: CONSTRAINT; Schema: public; Owner: app_owner
--

ALTER TABLE ONLY public.customers
    ADD CONSTRAINT customers_email_key UNIQUE (email);


--
-- Name: customers customers_pkey; Type: CONSTRAINT; Schema: public; Owner: app_owner
--

ALTER TABLE ONLY public.customers
    ADD CONSTRAINT customers_pkey PRIMARY KEY (id);


--
-- Name: orders orders_pkey; Type: CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.orders
    ADD CONSTRAINT orders_pkey PRIMARY KEY (id);


--
-- Name: orders_customer; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX orders_customer ON public.orders USING btree (customer_id);


--
-- Name: orders_placed_total; Type: INDEX; Schema: public; Owner: postgres
--

CREATE INDEX orders_placed_total ON public.orders USING btree (placed, total);


--
-- Name: orders orders_customer_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: postgres
--

ALTER TABLE ONLY public.orders
    ADD CONSTRAINT orders_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES public.customers(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


