-- A code that names both a bank and a mobile operator: "mts" is МТС Банк, but a merchant who
-- sends it for a SIM payment means the operator МТС (directory code mts_mobile). Where a mobile
-- operator is meant — sim requisites, SIM and CROSS_BORDER_SIM payments — such a bank code
-- stands for the operator it names here.
ALTER TABLE banks ADD COLUMN operator_code text REFERENCES banks (code);

UPDATE banks SET operator_code = 'mts_mobile' WHERE code = 'mts';
