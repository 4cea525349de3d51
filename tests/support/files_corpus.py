"""A small seeded knowledge base and the queries each of its files must answer (top 3)."""

from __future__ import annotations

CORPUS = {
    "idempotency.md": (
        "Retrying a payment request is only safe with an idempotency key. The server stores the "
        "key with the first result and returns that result for every retry, so a customer is "
        "never charged twice when the network drops a response."
    ),
    "tomatoes.md": (
        "Tomato plants need at least six hours of direct sun. Water deeply twice a week at the "
        "roots, stake or cage the stems, and pinch off suckers for larger fruit."
    ),
    "vacuum.md": (
        "PostgreSQL keeps old row versions after UPDATE and DELETE. VACUUM reclaims the space of "
        "these dead tuples and autovacuum runs it in the background; bloat grows when it lags."
    ),
    "sourdough.md": (
        "A sourdough starter is flour and water fermented by wild yeast and lactobacilli. Feed it "
        "daily; bake when it doubles within hours. The long proof gives the bread its sour taste."
    ),
    "tides.md": (
        "Ocean tides come from the gravitational pull of the moon and the sun. Spring tides, the "
        "largest range, occur at new and full moon when both pull in line."
    ),
    "passwords.md": (
        "Store passwords only as salted hashes made with a slow function such as Argon2 or bcrypt. "
        "Never keep plaintext or reversible encryption of user passwords."
    ),
    "marathon.md": (
        "Marathon training builds weekly mileage slowly, with one long run each weekend and a "
        "taper in the final three weeks before race day to arrive rested."
    ),
    "coffee.md": (
        "Espresso is brewed by forcing hot water at about nine bars of pressure through finely "
        "ground coffee. A shot takes roughly 25 to 30 seconds to extract."
    ),
    "volcano.md": (
        "Volcanoes erupt when magma rises through the crust. Lava, ash and volcanic gases escape; "
        "stratovolcanoes like Mount Fuji build steep cones from layered eruptions."
    ),
    "backups.md": (
        "Follow the 3-2-1 backup rule: three copies of your data, on two different media, with one "
        "copy off site. Test restoring regularly; an untested backup is a hope, not a plan."
    ),
    "photosynthesis.md": (
        "Photosynthesis lets plants turn sunlight, water and carbon dioxide into glucose and "
        "oxygen. Chlorophyll in the chloroplasts absorbs the light energy."
    ),
    "kubernetes.md": (
        "A Kubernetes Deployment keeps a set of identical pods running; a rolling update replaces "
        "pods gradually so the service stays available while a new version ships."
    ),
}

# Each query shares at least one content word with its file, so full-text ranking can answer it.
QUERIES = {
    "how do I avoid charging a customer twice when a payment is retried": "idempotency.md",
    "how much sun and water do tomato plants need": "tomatoes.md",
    "what does vacuum do with dead tuples in postgres": "vacuum.md",
    "how often should I feed a sourdough starter": "sourdough.md",
    "what causes ocean tides": "tides.md",
    "how should user passwords be stored": "passwords.md",
    "how to taper before a marathon race": "marathon.md",
    "what pressure is used to brew espresso": "coffee.md",
    "why do volcanoes erupt": "volcano.md",
    "what is the 3-2-1 backup rule": "backups.md",
    "how do plants make glucose from sunlight": "photosynthesis.md",
    "rolling update of pods in a kubernetes deployment": "kubernetes.md",
}

# Paraphrases with (almost) no words in common with their file: semantic ranking must find them.
PARAPHRASES = {
    "making sure a repeated charge request does not bill someone again": "idempotency.md",
    "growing juicy red garden fruit on vines": "tomatoes.md",
    "database table bloat cleanup": "vacuum.md",
    "fermented bread leaven": "sourdough.md",
    "why the sea level rises and falls twice a day": "tides.md",
    "keeping login secrets safe in a database": "passwords.md",
    "preparing to run 42 kilometres": "marathon.md",
    "making a strong Italian coffee shot": "coffee.md",
    "molten rock bursting out of a mountain": "volcano.md",
    "protecting files against disk failure": "backups.md",
    "how leaves produce food from light": "photosynthesis.md",
    "deploying a new release of containers without downtime": "kubernetes.md",
}
