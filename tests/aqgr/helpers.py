"""Small judgments written by the tests themselves."""

from __future__ import annotations

from pathlib import Path

JUDGMENTS = {
    "A1": """Ram Kumar v State of Punjab
Supreme Court of India

12 March 1998
Criminal Appeal No. 12 of 1997
The Judgment was delivered by : K. Singh, J.
1. The appellant was convicted under Section 302 of the Indian Penal Code for the murder of his wife by setting her on fire in the kitchen of their house. The deceased made a dying declaration before the Executive Magistrate at the hospital, naming the appellant.
2. Learned counsel for the appellant contended that the dying declaration was not corroborated by any other evidence and could not be the sole basis of the conviction.
3. The question that arises for consideration is whether a dying declaration recorded by a magistrate can form the sole basis of conviction without corroboration.
4. It is well settled that a dying declaration which is true and voluntary can be the sole basis of conviction without corroboration. In our opinion the declaration was recorded after the doctor certified that the deceased was fit to make a statement.
5. The appeal is accordingly dismissed.
""",
    "A2": """Sunita Devi v Union of India
Supreme Court of India

3 April 2001
Civil Appeal No. 77 of 2000
The Judgment was delivered by : R. Mehta, J.
1. The appellant, a clerk in a public sector bank, was dismissed from service without being given any notice or an opportunity of hearing by the disciplinary authority.
2. Learned counsel for the appellant contended that the order of dismissal violated the principles of natural justice and Article 311 of the Constitution.
3. The question for consideration is whether an order of dismissal passed without giving the employee an opportunity of being heard is void for violation of the rule of audi alteram partem.
4. In our view no person can be condemned unheard. The principles of natural justice require that an opportunity of hearing be given before a civil consequence is visited upon a person.
5. The appeal is allowed and the order of dismissal is set aside. No order as to costs.
""",
    "A3": """Mohan Lal v State of Rajasthan
Supreme Court of India

9 July 2004
Criminal Appeal No. 301 of 2003
The Judgment was delivered by : P. Rao, J.
1. The deceased was stabbed in a quarrel over parking near a market. Before he died in hospital he told the attending doctor that the appellant stabbed him, and the doctor recorded the statement.
2. Learned counsel for the appellant contended that the statement to the doctor was not recorded by a magistrate and required corroboration.
3. The point for consideration is whether a dying declaration recorded by a doctor, without a magistrate, can be relied upon as the sole basis of conviction.
4. We hold that there is no requirement of law that a dying declaration must be recorded by a magistrate; if it inspires confidence it may be acted upon without corroboration.
5. The appeal is dismissed.
""",
    "A4": """Hari Prasad v Commissioner of Excise
High Court of Delhi

5 May 2010
Writ Petition No. 901 of 2009
The Judgment was delivered by : S. Gupta, J.
1. The petitioner held a licence to run a liquor shop which was cancelled by the Commissioner of Excise on a complaint, without any show cause notice to the petitioner.
2. Learned counsel for the petitioner contended that the cancellation without notice offends the principles of natural justice.
3. The issue is whether the cancellation of a licence without a show cause notice and without hearing the licensee is valid.
4. In our opinion the rule of audi alteram partem applies to the cancellation of a licence because it visits the licensee with civil consequences.
5. The writ petition is allowed and the cancellation order is quashed.
""",
}


# A5, a later dying-declaration case, cites A1 (on point) and A2 (natural justice, off the facts).
CITING_JUDGMENTS = {
    **JUDGMENTS,
    "A5": """Kamla Bai v State of Madhya Pradesh
Supreme Court of India

4 June 2012
Criminal Appeal No. 55 of 2011
The Judgment was delivered by : N. Bose, J.
1. The deceased was set on fire by her husband and, before she died in the hospital, made a dying declaration to the treating doctor naming him.
2. The question is whether the dying declaration alone can sustain the conviction for murder. In Ram Kumar v. State of Punjab this Court held that a true and voluntary dying declaration can be the sole basis of conviction.
3. The High Court had also considered Sunita Devi v. Union of India on the hearing of the accused.
4. The appeal is dismissed.
""",
}


def write_judgments(folder: Path, items: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (items or JUDGMENTS).items():
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    return folder


def indexed_archive(home: Path, folder: Path, items: dict[str, str] | None = None):
    """An archive of `items` (default JUDGMENTS) summarised and indexed with the hashing embedder
    (fast: no torch)."""
    from aqgr import Archive, IndexSpec, Settings

    archive = Archive(settings=Settings.resolve(home, index=IndexSpec(embedder="hashing.v1")))
    archive.summarize([write_judgments(folder, items)])
    archive.build_index()
    return archive


DYING_DECLARATION_FACTS = (
    "An elderly shopkeeper was attacked with an axe by his neighbour during a dispute over a boundary wall. "
    "Before dying in the hospital he gave a statement to the treating doctor naming the neighbour as the attacker. "
    "There is no other eye witness and the prosecution relies only on this dying declaration to convict the accused of murder."
)

# A6, a later judgment, overrules A1 and distinguishes A2 (the treatments aqgr reads and shows).
OVERRULING_JUDGMENTS = {
    **JUDGMENTS,
    "A6": """Gopal Singh v State of Haryana
Supreme Court of India

20 January 2015
Criminal Appeal No. 90 of 2014
The Judgment was delivered by : K. Rao, J.
1. The accused was convicted of murder on the dying declaration of the deceased, recorded by a magistrate in the hospital, without any other eye witness.
2. We hold that Ram Kumar v. State of Punjab does not lay down the correct law on the dying declaration as the sole basis of conviction, and to that extent it is overruled.
3. The decision in Sunita Devi v. Union of India is clearly distinguishable on facts.
4. The appeal is allowed.
""",
}
